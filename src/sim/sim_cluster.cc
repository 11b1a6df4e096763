#include "sim/sim_cluster.h"

#include <algorithm>

#include "util/strings.h"

namespace gpuplane::sim {
namespace {

api::DeviceClass SimClass() {
  api::DeviceClass c;
  c.api_version = api::kResourceApiVersion;
  c.kind = "DeviceClass";
  c.metadata.name = kSimDriver;
  c.spec.selectors.push_back(api::DeviceSelector{
      api::CelDeviceSelector{util::Cat("device.driver == '", kSimDriver, "'")}});
  return c;
}

api::ResourceSlice NodeSlice(const TraceNode& n) {
  api::ResourceSlice s;
  s.api_version = api::kResourceApiVersion;
  s.kind = "ResourceSlice";
  s.metadata.name = util::Cat(n.name, "-gpus");
  s.spec.driver = kSimDriver;
  s.spec.pool = api::ResourcePool{n.name, 1, 1};
  s.spec.node_name = n.name;
  for (int g = 0; g < n.gpus; ++g) {
    api::Device d;
    d.name = util::Cat("gpu-", g);
    api::DeviceAttribute model, index;
    model.string_value = n.model;
    index.int_value = g;
    d.attributes["model"] = model;
    d.attributes["index"] = index;
    d.allow_multiple_allocations = true;
    d.capacity["gpu"] = api::DeviceCapacity{api::Quantity::FromUnits(1), std::nullopt};
    s.spec.devices.push_back(std::move(d));
  }
  return s;
}

// The node's CPU and memory as a Node's allocatable (memory left out when the trace has none:
// then it never limits, as in the view).
api::Node NodeObject(const TraceNode& n) {
  api::Node node;
  node.api_version = "v1";
  node.kind = "Node";
  node.metadata.name = n.name;
  node.status.allocatable["cpu"] = api::Quantity::FromMilli(n.cpu_milli);
  if (n.memory_mib > 0) {
    node.status.allocatable["memory"] = api::Quantity::FromUnits(n.memory_mib * (int64_t{1} << 20));
  }
  node.status.capacity = node.status.allocatable;
  return node;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const SimCluster>> SimCluster::FromNodes(
    const std::vector<TraceNode>& nodes) {
  std::vector<api::SourcedObject> objects;
  objects.push_back({SimClass(), "simulated", 0, true});
  std::map<std::string, int> seen;
  for (const TraceNode& n : nodes) {
    if (!seen.emplace(n.name, 0).second) {
      return absl::InvalidArgumentError(
          util::Cat(n.source, ": node \"", n.name, "\" appears twice; node names must be unique"));
    }
    if (n.gpus > sched::kMaxGpusPerNode) {
      return absl::InvalidArgumentError(util::Cat(n.source, ": node \"", n.name, "\" has ", n.gpus,
                                                  " GPUs; the simulator models at most ",
                                                  sched::kMaxGpusPerNode, " per node"));
    }
    objects.push_back({NodeObject(n), n.source, 0, true});
    if (n.gpus > 0) objects.push_back({NodeSlice(n), n.source, 0, true});
  }
  std::shared_ptr<SimCluster> c(new SimCluster(model::Inventory::Build(objects)));
  c->objects_ = std::move(objects);
  sched::ClusterView& v = c->view_;
  for (const TraceNode& n : nodes) {
    sched::NodeView nv;
    nv.name = n.name;
    nv.cpu_capacity = nv.cpu_free = n.cpu_milli;
    nv.memory_capacity = nv.memory_free = n.memory_mib;
    if (n.gpus > 0) {
      int model = v.ModelId(n.model);
      if (model < 0) {
        if (v.models.size() >= 64) {
          return absl::InvalidArgumentError(
              util::Cat(n.source, ": more than 64 GPU models; the simulator supports 64"));
        }
        model = static_cast<int>(v.models.size());
        v.models.push_back(n.model);
      }
      nv.model = model;
      nv.gpu_free.assign(n.gpus, sched::kMilli);
      std::optional<model::NodeId> id = c->inventory_->FindNode(n.name);
      if (!id) return absl::InternalError(util::Cat("node ", n.name, " lost its devices"));
      for (int g = 0; g < n.gpus; ++g) {
        std::optional<model::DeviceId> d =
            c->inventory_->FindDevice(kSimDriver, n.name, util::Cat("gpu-", g));
        if (!d) return absl::InternalError(util::Cat("node ", n.name, " lost gpu-", g));
        nv.gpu_devices.push_back(*d);
      }
      v.total_milli += static_cast<int64_t>(n.gpus) * sched::kMilli;
      v.max_gpus_per_node = std::max(v.max_gpus_per_node, n.gpus);
    }
    nv.Refresh();
    v.nodes.push_back(std::move(nv));
  }
  std::vector<uint32_t> order(v.nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  v.SetPriority(std::move(order));
  return std::shared_ptr<const SimCluster>(std::move(c));
}

SimState::SimState(std::shared_ptr<const SimCluster> cluster, sched::Rng& /*rng*/)
    : cluster_(std::move(cluster)), pod_object_{api::Pod{}, "simulated", 0, true} {}

SimState::~SimState() = default;

absl::StatusOr<std::unique_ptr<SimState>> SimState::Make(std::shared_ptr<const SimCluster> cluster,
                                                         std::unique_ptr<sched::Policy> policy,
                                                         sched::Rng& rng) {
  std::unique_ptr<SimState> s(new SimState(std::move(cluster), rng));
  s->snapshot_ = sched::Snapshot::Build(s->cluster_->shared_inventory(), s->cluster_->objects());
  absl::StatusOr<std::unique_ptr<sched::PolicyPlacer>> placer = sched::PolicyPlacer::Make(
      std::move(policy), s->cluster_->empty_view(), *s->snapshot_, s->demands_, rng);
  if (!placer.ok()) return placer.status();
  s->placer_ = std::move(*placer);
  sched::SessionOptions options;
  options.explain = false;
  options.placer = s->placer_.get();
  absl::StatusOr<std::unique_ptr<sched::Session>> session =
      sched::Session::Make(*s->snapshot_, s->pods_, std::move(options));
  if (!session.ok()) return session.status();
  s->session_ = std::move(*session);
  return s;
}

api::ResourceClaimSpec SimState::ClaimFor(const sched::PodDemand& pod) const {
  api::ResourceClaimSpec spec;
  api::DeviceRequest req;
  req.name = "gpu";
  api::ExactDeviceRequest ex;
  ex.device_class_name = kSimDriver;
  ex.count = pod.num_gpu;
  ex.capacity = api::CapacityRequirements{{{"gpu", api::Quantity::FromMilli(pod.gpu_milli)}}};
  if (pod.models != 0) {
    const sched::ClusterView& v = view();
    std::string list;
    for (size_t m = 0; m < v.models.size(); ++m) {
      if (pod.Allows(static_cast<int>(m))) {
        util::Append(list, list.empty() ? "'" : ", '", v.models[m], "'");
      }
    }
    ex.selectors.push_back(api::DeviceSelector{api::CelDeviceSelector{
        util::Cat("device.attributes['", kSimDriver, "'].model in [", list, "]")}});
  }
  req.exactly = ex;
  spec.devices.requests.push_back(std::move(req));
  return spec;
}

size_t SimState::PodOf(size_t job, const sched::PodDemand& pod) {
  if (job >= pod_of_job_.size()) pod_of_job_.resize(job + 1, SIZE_MAX);
  if (pod_of_job_[job] != SIZE_MAX) return pod_of_job_[job];
  const size_t index = pods_.pods.size();
  sched::PodInfo p = sched::DescribePod(pod_object_, index);
  p.key = util::Cat("sim/job-", job);
  p.cpu_milli = pod.cpu_milli;
  p.memory_bytes = pod.memory_mib * (int64_t{1} << 20);
  if (pod.num_gpu > 0) {
    api::ResourceClaim claim;
    claim.metadata.namespace_name = "sim";
    claim.metadata.name = util::Cat("job-", job);
    claim.spec = ClaimFor(pod);
    p.claims.push_back({p.key, sched::OwnedClaim(std::move(claim)), false,
                        util::Cat("shape/", pod.num_gpu, "/", pod.gpu_milli, "/", pod.models)});
  }
  pods_.pods.push_back(std::move(p));
  demands_.push_back(pod);
  pod_of_job_[job] = index;
  return index;
}

SimState::Placed SimState::Place(size_t job, const sched::PodDemand& pod) {
  const size_t p = PodOf(job, pod);
  sched::Decision d = session_->Decide(p);
  if (d.status.ok()) return {Outcome::kPlaced, placer_->ViewNode(d.node)};
  // The policy chose nothing, or the node it chose refused the pod.
  return {placer_->chose() ? Outcome::kRefused : Outcome::kNoNode, 0};
}

absl::Status SimState::Release(size_t job) {
  if (job >= pod_of_job_.size() || pod_of_job_[job] == SIZE_MAX) {
    return absl::NotFoundError(util::Cat("job ", job, " was never placed"));
  }
  return session_->Evict(pod_of_job_[job]);
}

}  // namespace gpuplane::sim
