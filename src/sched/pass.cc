#include "sched/pass.h"

#include <chrono>

namespace gpuplane::sched {

absl::StatusOr<PassResult> RunPass(const std::vector<api::SourcedObject>& cluster,
                                   const std::vector<api::SourcedObject>& work,
                                   const SessionOptions& options,
                                   const std::map<std::string, double>& prices) {
  auto start = std::chrono::steady_clock::now();
  PassResult r;
  std::vector<api::SourcedObject> state = cluster;
  for (const api::SourcedObject& o : work) {
    const auto* c = std::get_if<api::ResourceClaim>(&o.object);
    if (c != nullptr && c->status.allocation) state.push_back(o);
  }
  r.snapshot = Snapshot::Build(state, prices);
  r.warnings = r.snapshot->warnings();
  r.pods = BuildPodSet(work, cluster);
  r.warnings.insert(r.warnings.end(), r.pods.warnings.begin(), r.pods.warnings.end());
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Make(*r.snapshot, r.pods, options);
  if (!session.ok()) return session.status();
  r.decisions = (*session)->Run();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gpuplane::sched
