// The scheduler's HTTP endpoints: /metrics (Prometheus text, scheduler_metrics.h), /healthz
// (200 while the cache's informers run; 503 with the error once one stopped, e.g. RBAC) and
// /readyz (200 once the cache has synced, saying whether this replica leads; 503 before, with
// why reading the cluster fails when it does).
// Ownership: borrows the Scheduler, which must outlive it; serves on its own threads until
// destroyed.
#ifndef GPUPLANE_KUBE_SCHEDULER_SERVER_H_
#define GPUPLANE_KUBE_SCHEDULER_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "kube/scheduler.h"

namespace httplib {
class Server;
}

namespace gpuplane::kube {

class SchedulerServer {
 public:
  explicit SchedulerServer(const Scheduler& scheduler);
  ~SchedulerServer();
  SchedulerServer(const SchedulerServer&) = delete;
  SchedulerServer& operator=(const SchedulerServer&) = delete;

  // Listens on "HOST:PORT" (port 0: any free port); returns the address, or an error naming
  // `addr`.
  absl::StatusOr<std::string> Start(const std::string& addr);

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_SCHEDULER_SERVER_H_
