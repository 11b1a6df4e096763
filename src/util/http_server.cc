#include "util/http_server.h"

#include <httplib.h>

#include <chrono>

#include "absl/strings/numbers.h"
#include "util/strings.h"

namespace gpuplane::util {

absl::StatusOr<std::string> ListenInBackground(httplib::Server& server, std::string_view flag,
                                               const std::string& addr, std::thread& thread) {
  const size_t colon = addr.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(addr.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(util::Cat(flag, " ", addr, ": expected HOST:PORT"));
  }
  const std::string host = addr.substr(0, colon);
  port = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (port <= 0) {
    return absl::UnavailableError(
        util::Cat(flag, " ", addr, ": cannot listen there (in use, or no such address?)"));
  }
  thread = std::thread([&server] { server.listen_after_bind(); });
  // listen_after_bind marks the server running as its first step; until then stop() is lost.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return util::Cat(host, ":", port);
}

void StopListening(httplib::Server& server, std::thread& thread) {
  if (!thread.joinable()) return;
  server.stop();
  thread.join();
}

}  // namespace gpuplane::util
