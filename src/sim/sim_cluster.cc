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
      std::optional<model::NodeId> id = c->inventory_.FindNode(n.name);
      if (!id) return absl::InternalError(util::Cat("node ", n.name, " lost its devices"));
      for (int g = 0; g < n.gpus; ++g) {
        std::optional<model::DeviceId> d =
            c->inventory_.FindDevice(kSimDriver, n.name, util::Cat("gpu-", g));
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

SimState::SimState(std::shared_ptr<const SimCluster> cluster)
    : cluster_(std::move(cluster)),
      state_(cluster_->inventory()),
      view_(cluster_->empty_view()),
      allocator_(
          cluster_->inventory(),
          alloc::AllocatorOptions{.explain = false, .scorer = &prefer_, .max_solutions = 1}) {
  device_gpu_.assign(cluster_->inventory().devices().size(), {0, -1});
  for (uint32_t n = 0; n < view_.nodes.size(); ++n) {
    const sched::NodeView& nv = view_.nodes[n];
    inventory_node_.push_back(cluster_->inventory().FindNode(nv.name).value_or(model::kNoId));
    for (int g = 0; g < nv.gpus(); ++g) device_gpu_[nv.gpu_devices[g]] = {n, g};
  }
}

const alloc::CompiledClaim& SimState::ClaimFor(const sched::PodDemand& pod) {
  auto key = std::make_tuple(pod.num_gpu, pod.gpu_milli, pod.models);
  auto it = claims_.find(key);
  if (it != claims_.end()) return *it->second;
  api::ResourceClaimSpec spec;
  api::DeviceRequest req;
  req.name = "gpu";
  api::ExactDeviceRequest ex;
  ex.device_class_name = kSimDriver;
  ex.count = pod.num_gpu;
  ex.capacity = api::CapacityRequirements{{{"gpu", api::Quantity::FromMilli(pod.gpu_milli)}}};
  if (pod.models != 0) {
    std::string list;
    for (size_t m = 0; m < view_.models.size(); ++m) {
      if (pod.Allows(static_cast<int>(m))) {
        util::Append(list, list.empty() ? "'" : ", '", view_.models[m], "'");
      }
    }
    ex.selectors.push_back(api::DeviceSelector{api::CelDeviceSelector{
        util::Cat("device.attributes['", kSimDriver, "'].model in [", list, "]")}});
  }
  req.exactly = ex;
  spec.devices.requests.push_back(std::move(req));
  absl::StatusOr<alloc::CompiledClaim> compiled =
      alloc::CompileClaim("sim", "pod", spec, cluster_->inventory(), selectors_);
  if (!compiled.ok()) std::abort();  // the spec is built above from known parts
  return *claims_.emplace(key, std::make_unique<alloc::CompiledClaim>(std::move(*compiled)))
              .first->second;
}

std::optional<Placed> SimState::Place(const sched::PodDemand& pod, const sched::Placement& where) {
  sched::NodeView& node = view_.nodes[where.node];
  if (node.cpu_free < pod.cpu_milli ||
      (node.memory_capacity > 0 && node.memory_free < pod.memory_mib)) {
    return std::nullopt;
  }
  Placed placed{where.node, {}};
  if (pod.num_gpu > 0) {
    model::NodeId id = inventory_node_[where.node];
    if (id == model::kNoId) return std::nullopt;
    std::vector<model::DeviceId> preferred;
    for (int g : where.gpus) preferred.push_back(node.gpu_devices[g]);
    prefer_.Prefer(std::move(preferred));
    const alloc::CompiledClaim& claim = ClaimFor(pod);
    alloc::Outcome o = allocator_.Allocate({&claim}, id, state_);
    if (!o.allocated || !allocator_.Commit(o, {&claim}, state_).ok()) return std::nullopt;
    bool as_chosen = where.gpus.empty() || o.choices.size() == where.gpus.size();
    for (size_t i = 0; i < o.choices.size() && as_chosen && !where.gpus.empty(); ++i) {
      as_chosen = device_gpu_[o.choices[i].device].second == where.gpus[i];
    }
    if (!as_chosen) ++disagreements_;
    for (const alloc::Choice& ch : o.choices) {
      auto [n, g] = device_gpu_[ch.device];
      auto it = ch.consumed.find("gpu");
      int64_t milli = it == ch.consumed.end() ? 0 : it->second.MilliValue();
      node.gpu_free[g] -= static_cast<int>(milli);
      allocated_milli_ += milli;
    }
    placed.choices = std::move(o.choices);
    node.tags[sched::TagOf(pod)]++;
  }
  node.cpu_free -= pod.cpu_milli;
  node.memory_free -= pod.memory_mib;
  node.Refresh();
  ++node.version;
  return placed;
}

absl::Status SimState::Release(const sched::PodDemand& pod, const Placed& placed) {
  sched::NodeView& node = view_.nodes[placed.node];
  if (!placed.choices.empty()) {
    absl::Status s = allocator_.Release(placed.choices, state_);
    if (!s.ok()) return s;
    for (const alloc::Choice& ch : placed.choices) {
      auto [n, g] = device_gpu_[ch.device];
      auto it = ch.consumed.find("gpu");
      int64_t milli = it == ch.consumed.end() ? 0 : it->second.MilliValue();
      node.gpu_free[g] += static_cast<int>(milli);
      allocated_milli_ -= milli;
    }
    node.tags[sched::TagOf(pod)]--;
  }
  node.cpu_free += pod.cpu_milli;
  node.memory_free += pod.memory_mib;
  node.Refresh();
  ++node.version;
  return absl::OkStatus();
}

}  // namespace gpuplane::sim
