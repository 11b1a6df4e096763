#include "util/http_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace gpuplane::util {
namespace {

TEST(HttpServer, ServesWhereItSaysAndStops) {
  httplib::Server server;
  server.Get("/ping", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("pong", "text/plain");
  });
  std::thread thread;
  absl::StatusOr<std::string> where = ListenInBackground(server, "--listen", "127.0.0.1:0", thread);
  ASSERT_TRUE(where.ok()) << where.status();
  const int port = std::stoi(where->substr(where->rfind(':') + 1));
  httplib::Client client("127.0.0.1", port);
  httplib::Result got = client.Get("/ping");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, "pong");
  StopListening(server, thread);
  EXPECT_FALSE(thread.joinable());
  StopListening(server, thread);  // a second stop does nothing
}

// cpp-httplib 0.11 drops a stop() that comes before its thread enters the accept loop; a
// server stopped right after its start must still stop (this hung about one agent in three).
TEST(HttpServer, StopsRightAfterTheStart) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    httplib::Server server;
    std::thread thread;
    ASSERT_TRUE(ListenInBackground(server, "--listen", "127.0.0.1:0", thread).ok());
    StopListening(server, thread);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(HttpServer, ErrorsNameTheFlagAndTheAddress) {
  httplib::Server server;
  std::thread thread;
  for (const char* bad : {"", "localhost", "127.0.0.1:x", "127.0.0.1:-1", "127.0.0.1:65536"}) {
    absl::StatusOr<std::string> r = ListenInBackground(server, "--metrics-addr", bad, thread);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().message(), std::string("--metrics-addr ") + bad + ": expected HOST:PORT");
  }
  absl::StatusOr<std::string> r = ListenInBackground(server, "--listen", "192.0.2.1:0", thread);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(thread.joinable());
}

}  // namespace
}  // namespace gpuplane::util
