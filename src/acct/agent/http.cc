#include "acct/agent/http.h"

#include <httplib.h>

#include "absl/status/statusor.h"
#include "acct/attribution_json.h"
#include "acct/metrics.h"
#include "util/http_server.h"
#include "util/strings.h"

namespace gpuplane::acct {

AgentServer::AgentServer(AgentState& state) : server_(std::make_unique<httplib::Server>()) {
  server_->Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(state.mu);
      body = RenderMetrics(state.accountant->Totals(), AgentCounters{state.problems->counts()});
    }
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/attribution", [&state](const httplib::Request&, httplib::Response& res) {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(state.mu);
      body = AttributionJson(state.accountant->Totals());
    }
    res.set_content(body, "application/json");
  });
  server_->Get("/healthz", [&state](const httplib::Request&, httplib::Response& res) {
    double age = 0;
    {
      std::lock_guard<std::mutex> lock(state.mu);
      age = state.clock->Now() - state.last_pass_wall;
    }
    if (age <= state.stale_after) {
      res.set_content("ok\n", "text/plain");
      return;
    }
    res.status = 503;
    res.set_content(util::Cat("no sampling pass for ", static_cast<int64_t>(age), " s\n"),
                    "text/plain");
  });
}

AgentServer::~AgentServer() { util::StopListening(*server_, thread_); }

absl::StatusOr<std::string> AgentServer::Start(const std::string& listen) {
  return util::ListenInBackground(*server_, "--listen", listen, thread_);
}

}  // namespace gpuplane::acct
