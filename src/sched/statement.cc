#include "sched/statement.h"

namespace gpuplane::sched {

Statement::~Statement() {
  // Nothing can report a failure from here; Rollback only fails on a corrupted snapshot.
  (void)Rollback(0);
}

absl::Status Statement::Place(PodPlacement placement,
                              std::map<std::string, ClaimAllocation> fresh) {
  std::string pod = placement.pod;
  absl::Status st = snapshot_.Place(std::move(placement), std::move(fresh));
  if (st.ok()) ops_.push_back({true, std::move(pod), {}});
  return st;
}

absl::Status Statement::Evict(const std::string& pod) {
  absl::StatusOr<Snapshot::Removed> r = snapshot_.Remove(pod);
  if (!r.ok()) return r.status();
  ops_.push_back({false, pod, std::move(*r)});
  return absl::OkStatus();
}

absl::Status Statement::Rollback(size_t mark) {
  while (ops_.size() > mark) {
    Op op = std::move(ops_.back());
    ops_.pop_back();
    absl::Status st =
        op.place ? snapshot_.Remove(op.pod).status() : snapshot_.Restore(std::move(op.removed));
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, bool>> Statement::Operations() const {
  std::vector<std::pair<std::string, bool>> out;
  out.reserve(ops_.size());
  for (const Op& op : ops_) out.emplace_back(op.pod, op.place);
  return out;
}

}  // namespace gpuplane::sched
