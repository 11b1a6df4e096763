// Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection does:
// a candidate takes the Lease when it is absent, its own, or not renewed for its duration
// (measured on this process's clock from when the candidate last saw the record change, so
// clocks need not agree); the leader renews every retry period and gives up leadership as
// soon as a renewal has not succeeded within the renew deadline. Writes use the Lease's
// resourceVersion, so two candidates never both win one round. Stop() while leading releases
// the Lease (holder cleared) so another candidate takes over at once.
// Thread-safety: Run() on one thread; Stop(), IsLeader(), transitions() from any thread. The
// callbacks run on Run()'s thread.
#ifndef GPUPLANE_KUBE_LEADER_H_
#define GPUPLANE_KUBE_LEADER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "kube/client.h"

namespace gpuplane::kube {

struct LeaderOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "gpuplane-scheduler";
  std::string identity;        // unique per replica, e.g. the pod name plus a random suffix
  double lease_seconds = 15;   // how long a Lease holds without renewal
  double renew_deadline = 10;  // a leader that cannot renew for this long steps down
  double retry_seconds = 2;    // how often to try to acquire or renew
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
};

class LeaderElector {
 public:
  LeaderElector(Client client, LeaderOptions options);

  // Campaigns and leads until Stop(); releases the Lease if it holds it then.
  void Run();
  void Stop() { stop_ = true; }
  // For tests of crashes: Stop() without releasing, as if the process died.
  void Abandon() {
    release_ = false;
    stop_ = true;
  }
  bool IsLeader() const { return leading_; }
  int64_t acquisitions() const { return acquisitions_; }

 private:
  enum class Outcome { kHeld, kNotOurs, kFailed };
  Outcome TryAcquireOrRenew();
  void Release();
  void SetLeading(bool leading);
  std::string LeasePath(bool collection) const;

  Client client_;
  LeaderOptions options_;
  std::atomic<bool> stop_{false}, release_{true}, leading_{false};
  std::atomic<int64_t> acquisitions_{0};
  // The last Lease record seen (holder and renewTime) and when this process saw it change.
  std::string observed_record_;
  std::chrono::steady_clock::time_point observed_at_;
  std::chrono::steady_clock::time_point last_renewed_;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_LEADER_H_
