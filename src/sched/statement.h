// A journal of tentative operations on a Snapshot: place a pod (its new claims allocated with
// the allocator's choices, shared claims joined, CPU and memory requested) and evict a pod
// (its claims released when it was their last user). Checkpoint/Rollback undo operations
// back to a mark; Commit makes them permanent. Gangs and preemption what-ifs run inside one
// Statement, so partial state never escapes: a Statement destroyed without Commit rolls
// everything back.
//
// Ownership: borrows the snapshot, which must outlive it. One open Statement per snapshot at
// a time. Not thread-safe.
#ifndef GPUPLANE_SCHED_STATEMENT_H_
#define GPUPLANE_SCHED_STATEMENT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sched/snapshot.h"

namespace gpuplane::sched {

class Statement {
 public:
  explicit Statement(Snapshot& snapshot) : snapshot_(snapshot) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Places `placement`; `fresh` are the claims allocated for it now (key -> allocation).
  absl::Status Place(PodPlacement placement, std::map<std::string, ClaimAllocation> fresh);
  // Removes a placed pod; claims it was the last user of are released.
  absl::Status Evict(const std::string& pod);

  size_t Checkpoint() const { return ops_.size(); }
  // Undoes every operation after `mark`, newest first.
  absl::Status Rollback(size_t mark);
  // Keeps everything done so far; the journal starts empty again.
  void Commit() { ops_.clear(); }

  // Pods placed (true) or evicted (false) since the last Commit, in order.
  std::vector<std::pair<std::string, bool>> Operations() const;

 private:
  struct Op {
    bool place = true;
    std::string pod;
    Snapshot::Removed removed;  // for an eviction
  };
  Snapshot& snapshot_;
  std::vector<Op> ops_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_STATEMENT_H_
