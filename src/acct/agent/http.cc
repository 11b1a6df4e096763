#include "acct/agent/http.h"

#include <httplib.h>

#include "absl/status/statusor.h"
#include "acct/attribution_json.h"
#include "acct/metrics.h"
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

AgentServer::~AgentServer() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

absl::StatusOr<std::string> AgentServer::Start(const std::string& listen) {
  size_t colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    try {
      port = std::stoi(listen.substr(colon + 1));
    } catch (const std::exception&) {
    }
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(util::Cat("--listen ", listen, ": expected HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (port == 0) {
    port = server_->bind_to_any_port(host);
  } else if (!server_->bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return absl::UnavailableError(
        util::Cat("--listen ", listen, ": cannot listen there (in use, or no such address?)"));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return util::Cat(host, ":", port);
}

}  // namespace gpuplane::acct
