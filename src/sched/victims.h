// Victim choice for preemption and reclaim, by lost work: which running jobs to evict so a
// waiting job fits, throwing away the fewest GPU-seconds (checkpoints.h), always whole jobs
// (a gang is one job: all its members go, never a part). Who may evict whom: in one queue,
// lower priority only; across queues (reclaim), only while the waiting job's queue stays
// within its fair share after it starts and every victim's queue stays at or above its own
// fair share after it loses them, so a reclaim never invites the reverse one (no cycles while
// fair shares hold); without queues (-1), priority alone decides. Jobs within their
// min-runtime are never victims; opportunistic jobs within their guarantee window are
// victims only when nothing else makes room. Pure functions; thread-safe.
#ifndef GPUPLANE_SCHED_VICTIMS_H_
#define GPUPLANE_SCHED_VICTIMS_H_

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace gpuplane::sched {

struct Running {
  std::vector<std::pair<int, int>> placement;  // (node, GPUs) of each of its pods
  int queue = -1;                              // -1: no queues
  int priority = 0;
  double lost_gpu_seconds = 0;  // what evicting it now throws away
  bool min_runtime = false;     // still within its min-runtime: never a victim
  bool in_window = false;       // opportunistic, within its guarantee window
  int Gpus() const;
};

struct Preemptor {
  std::vector<int> pods;  // GPUs of each pod; each pod runs on one node
  int queue = -1;
  int priority = 0;
  // Lower-priority jobs of other queues are victims too, whatever their queues' shares
  // (non-preemptible work does not wait for its queue's share, as in kube-scheduler).
  bool priority_across_queues = false;
  int Gpus() const;
};

struct QueueUse {
  double allocated = 0;  // GPUs its running jobs hold
  double fair = 0;       // its fair share of GPUs now (fair_share.h)
};

struct Victims {
  std::vector<size_t> jobs;  // indices into the running jobs, ascending
  double lost_gpu_seconds = 0;
  int gpus = 0;
  bool from_window = false;  // needed a job within its guarantee window
};

// Whether `p` may evict `r` on its own (the queues' floors over a whole set of victims are
// checked by ChooseVictims).
bool MayEvict(const Preemptor& p, const Running& r, const std::vector<QueueUse>& queues);

// Whether evicting `r` counts against its queue's fair-share floor: another queue's job,
// unless `p` outranks it across queues.
bool Floored(const Preemptor& p, const Running& r);

// Whether the victims leave every other queue at or above its fair share.
bool KeepsFloors(const Preemptor& p, const std::vector<Running>& running,
                 const std::vector<size_t>& victims, const std::vector<QueueUse>& queues);

// Whether pods of these sizes fit into nodes with these free GPUs, each pod on one node.
bool Fits(const std::vector<int>& pods, const std::vector<int>& free);

// The victims that make room for `p` given each node's free GPUs, with the least lost work
// (then the fewest GPUs, then the fewest jobs); nullopt when no allowed set makes room. An
// empty set when `p` fits already. A single pod's choice is exact (every subset of the
// allowed jobs on each node; above 12 on one node, the 12 cheapest per GPU there); a pod set
// is placed pod by pod, largest first, each exactly, then victims that are not needed are
// dropped, with an exhaustive search over up to 16 allowed jobs when that fails.
std::optional<Victims> ChooseVictims(const std::vector<int>& free,
                                     const std::vector<Running>& running, const Preemptor& p,
                                     const std::vector<QueueUse>& queues);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_VICTIMS_H_
