#include "kube/scheduler_server.h"

#include <httplib.h>

#include "util/http_server.h"
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
      std::string why = s->Trouble();
      res.set_content(util::Cat("the cache has not synced", why.empty() ? "" : ": ", why, "\n"),
                      "text/plain");
      return;
    }
    res.set_content(s->metrics().leading ? "ok: leading\n" : "ok: standby\n", "text/plain");
  });
}

SchedulerServer::~SchedulerServer() { util::StopListening(*server_, thread_); }

absl::StatusOr<std::string> SchedulerServer::Start(const std::string& addr) {
  return util::ListenInBackground(*server_, "--metrics-addr", addr, thread_);
}

}  // namespace gpuplane::kube
