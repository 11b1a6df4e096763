#include "sched/pass.h"

#include <set>
#include <string>
#include <utility>
#include <variant>

namespace gpuplane::sched {
namespace {

double Now(const SessionOptions& options) {
  return options.clock != nullptr ? options.clock->Now() : 0;
}

// The pass once the inventory is built from `cluster` (its slices taken or borrowed).
absl::StatusOr<PassResult> RunOn(std::shared_ptr<const model::Inventory> inventory,
                                 api::ObjectRefs cluster, const api::ObjectRefs& work,
                                 const SessionOptions& options,
                                 const std::map<std::string, double>& prices, double start) {
  // Queue objects may come with the cluster or with the work (unless the caller built the
  // tree).
  absl::StatusOr<QueueTree> queues = QueueTree();
  if (options.queues == nullptr) {
    std::vector<api::SourcedObject> queue_objects;
    for (const api::ObjectRefs* objects : {&std::as_const(cluster), &work}) {
      for (const api::SourcedObject* o : *objects) {
        if (std::holds_alternative<api::Queue>(o->object)) queue_objects.push_back(*o);
      }
    }
    queues = QueueTree::Build(queue_objects);
    if (!queues.ok()) return queues.status();
  }
  PassResult r;
  r.pods = BuildPodSet(work, cluster);  // copies the claims it needs; borrows `work`
  // The workload's allocated claims, CSINodes and VolumeAttachments count as cluster state too
  // (once: the same file may be given as both), and its PersistentVolumes name what the
  // attachments attach.
  std::set<std::string> claims, csi_nodes, attachments;
  for (const api::SourcedObject* o : cluster) {
    if (const auto* c = std::get_if<api::ResourceClaim>(&o->object)) {
      claims.insert(c->metadata.namespace_name + "/" + c->metadata.name);
    } else if (const auto* n = std::get_if<api::CSINode>(&o->object)) {
      csi_nodes.insert(n->metadata.name);
    } else if (const auto* a = std::get_if<api::VolumeAttachment>(&o->object)) {
      attachments.insert(a->metadata.name);
    }
  }
  for (const api::SourcedObject* o : work) {
    const auto* n = std::get_if<api::CSINode>(&o->object);
    if (n != nullptr && csi_nodes.insert(n->metadata.name).second) cluster.push_back(o);
    const auto* a = std::get_if<api::VolumeAttachment>(&o->object);
    if (a != nullptr && attachments.insert(a->metadata.name).second) cluster.push_back(o);
    if (std::holds_alternative<api::PersistentVolume>(o->object)) cluster.push_back(o);
    const auto* c = std::get_if<api::ResourceClaim>(&o->object);
    if (c != nullptr && c->status.allocation &&
        claims.insert(c->metadata.namespace_name + "/" + c->metadata.name).second) {
      cluster.push_back(o);
    }
  }
  r.snapshot = Snapshot::Build(std::move(inventory), cluster, prices);
  if (options.clock != nullptr) r.snapshot_seconds = options.clock->Now() - start;
  r.warnings = r.snapshot->warnings();
  r.warnings.insert(r.warnings.end(), r.pods.warnings.begin(), r.pods.warnings.end());
  SessionOptions with_queues = options;
  if (with_queues.queues == nullptr) with_queues.queues = &*queues;
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Make(*r.snapshot, r.pods, with_queues);
  if (!session.ok()) return session.status();
  r.decisions = (*session)->Run();
  r.queue_devices = (*session)->QueueDevices();
  r.other_demand = (*session)->OtherDemand();
  return r;
}

}  // namespace

absl::StatusOr<PassResult> RunPass(std::vector<api::SourcedObject> cluster,
                                   const std::vector<api::SourcedObject>& work,
                                   const SessionOptions& options,
                                   const std::map<std::string, double>& prices) {
  const double start = Now(options);
  // The slices move into the inventory; the rest of `cluster` is read, and copied where kept.
  auto inventory =
      std::make_shared<const model::Inventory>(model::Inventory::BuildTakingSlices(cluster));
  return RunOn(std::move(inventory), api::RefsOf(cluster), api::RefsOf(work), options, prices,
               start);
}

absl::StatusOr<PassResult> RunPass(const api::ObjectRefs& cluster, const api::ObjectRefs& work,
                                   const SessionOptions& options,
                                   const std::map<std::string, double>& prices) {
  const double start = Now(options);
  auto inventory =
      std::make_shared<const model::Inventory>(model::Inventory::BuildBorrowingSlices(cluster));
  return RunOn(std::move(inventory), cluster, work, options, prices, start);
}

}  // namespace gpuplane::sched
