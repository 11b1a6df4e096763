// The agent's HTTP endpoints: /metrics (Prometheus text), /healthz (503 when no sampling pass
// ran for `stale_after` seconds) and /attribution (the running totals as JSON). Handlers read
// the agent's state under `AgentState::mu`; the server runs on its own threads.
#ifndef GPUPLANE_ACCT_AGENT_HTTP_H_
#define GPUPLANE_ACCT_AGENT_HTTP_H_

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "acct/accountant.h"
#include "acct/agent/support.h"
#include "util/clock.h"

namespace httplib {
class Server;
}

namespace gpuplane::acct {

// What the sampling loop and the HTTP handlers share.
struct AgentState {
  std::mutex mu;
  Accountant* accountant = nullptr;
  Problems* problems = nullptr;
  const util::Clock* clock = nullptr;  // the agent's; last_pass_wall is on it
  double last_pass_wall = 0;
  double stale_after = 10;
};

class AgentServer {
 public:
  explicit AgentServer(AgentState& state);
  ~AgentServer();  // stops serving
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  // Listens on "HOST:PORT" (port 0: any free port) and serves on a thread; returns the
  // address it listens on, or an error naming `listen`.
  absl::StatusOr<std::string> Start(const std::string& listen);

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_AGENT_HTTP_H_
