#include "kube/scheduler_server.h"

#include <httplib.h>

#include "absl/strings/numbers.h"
#include "util/strings.h"

namespace gpuplane::kube {

SchedulerServer::SchedulerServer(const Scheduler& scheduler)
    : server_(std::make_unique<httplib::Server>()) {
  const Scheduler* s = &scheduler;
  server_->Get("/metrics", [s](const httplib::Request&, httplib::Response& res) {
    res.set_content(s->metrics().Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [s](const httplib::Request&, httplib::Response& res) {
    absl::Status e = s->Error();
    if (e.ok()) {
      res.set_content("ok\n", "text/plain");
      return;
    }
    res.status = 503;
    res.set_content(util::Cat(std::string(e.message()), "\n"), "text/plain");
  });
  server_->Get("/readyz", [s](const httplib::Request&, httplib::Response& res) {
    if (!s->Ready()) {
      res.status = 503;
      res.set_content("the cache has not synced\n", "text/plain");
      return;
    }
    res.set_content(s->metrics().leading ? "ok: leading\n" : "ok: standby\n", "text/plain");
  });
}

SchedulerServer::~SchedulerServer() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

absl::StatusOr<std::string> SchedulerServer::Start(const std::string& addr) {
  size_t colon = addr.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(addr.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(util::Cat("--metrics-addr ", addr, ": expected HOST:PORT"));
  }
  std::string host = addr.substr(0, colon);
  port =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (port <= 0) {
    return absl::UnavailableError(
        util::Cat("--metrics-addr ", addr, ": cannot listen there (in use, or no such address?)"));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return util::Cat(host, ":", port);
}

}  // namespace gpuplane::kube
