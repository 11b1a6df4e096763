#include "sim/cluster_generator.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "model/gpu_catalog.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

using api::Quantity;

api::DeviceAttribute Str(std::string v) {
  api::DeviceAttribute a;
  a.string_value = std::move(v);
  return a;
}
api::DeviceAttribute Int(int64_t v) {
  api::DeviceAttribute a;
  a.int_value = v;
  return a;
}
api::DeviceAttribute Ver(std::string v) {
  api::DeviceAttribute a;
  a.version_value = std::move(v);
  return a;
}
api::DeviceCapacity Cap(Quantity q) { return api::DeviceCapacity{q, std::nullopt}; }
Quantity Units(int64_t v) { return Quantity::FromUnits(v); }
Quantity Gib(int64_t v) {
  return Quantity::FromUnits(v * 1024 * 1024 * 1024, Quantity::Format::kBinarySI);
}

// Deterministic GPU UUID from the node name and index (FNV-1a).
std::string MakeUuid(std::string_view node, int index) {
  uint64_t h1 = 1469598103934665603ULL, h2 = 1099511628211ULL * 31;
  for (char c : node) {
    h1 = (h1 ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
    h2 = (h2 ^ static_cast<uint8_t>(c)) * 1469598103934665603ULL;
  }
  h1 = (h1 ^ static_cast<uint64_t>(index)) * 1099511628211ULL;
  h2 = (h2 ^ static_cast<uint64_t>(index + 7)) * 1099511628211ULL;
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(h1 >> 32),
                static_cast<unsigned>((h1 >> 16) & 0xffff), static_cast<unsigned>(h1 & 0xffff),
                static_cast<unsigned>(h2 >> 48),
                static_cast<unsigned long long>(h2 & 0xffffffffffffULL));
  return buf;
}

// Attributes every device of a physical GPU carries (full GPU and its MIG devices).
void CommonAttributes(api::Device& d, const model::GpuProduct& gpu, const ClusterSpec& spec,
                      const std::string& node, int index) {
  d.attributes["productName"] = Str(std::string(gpu.product_name));
  d.attributes["brand"] = Str("Nvidia");
  d.attributes["architecture"] = Str(std::string(gpu.architecture));
  d.attributes["cudaComputeCapability"] = Ver(std::string(gpu.compute_capability));
  d.attributes["driverVersion"] = Ver(spec.driver_version);
  d.attributes["cudaDriverVersion"] = Ver(spec.cuda_driver_version);
  char bus[32];
  std::snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x18 + 0x10 * index);
  d.attributes["resource.kubernetes.io/pciBusID"] = Str(bus);
  char root[32];
  std::snprintf(root, sizeof root, "pci0000:%02x", 0x10 + 0x20 * (index / 2));
  d.attributes["resource.kubernetes.io/pcieRoot"] = Str(root);
  if (gpu.nvlink) d.attributes["nvlinkDomain"] = Str(node + "-nvlink");
}

api::Device FullGpu(const model::GpuProduct& gpu, const ClusterSpec& spec, const std::string& node,
                    int index) {
  api::Device d;
  d.name = util::Cat("gpu-", index);
  d.attributes["type"] = Str("gpu");
  d.attributes["uuid"] = Str(MakeUuid(node, index));
  d.attributes["index"] = Int(index);
  d.attributes["minor"] = Int(index);
  CommonAttributes(d, gpu, spec, node, index);
  d.capacity["memory"] = Cap(Gib(gpu.memory_gib));
  return d;
}

std::string CounterSetName(int index) { return util::Cat("gpu-", index, "-counter-set"); }

// Every counter of one GPU: engines, SMs, memory and the eight memory slices.
std::map<std::string, api::Counter> GpuCounters(const model::GpuProduct& gpu) {
  const model::MigProfile& whole = model::MigProfiles().back();
  std::map<std::string, api::Counter> c;
  c["multiprocessors"] = {Units(gpu.multiprocessors)};
  c["copy-engines"] = {Units(whole.copy_engines)};
  c["decoders"] = {Units(whole.decoders)};
  c["jpeg-engines"] = {Units(whole.jpeg_engines)};
  c["ofa-engines"] = {Units(whole.ofa_engines)};
  c["memory"] = {Gib(gpu.memory_gib)};
  for (int s = 0; s < 8; ++s) c[util::Cat("memory-slice-", s)] = {Units(1)};
  return c;
}

std::vector<api::Device> MigDevices(const model::GpuProduct& gpu, const ClusterSpec& spec,
                                    const std::string& node, int index) {
  std::vector<api::Device> out;
  std::span<const model::MigProfile> profiles = model::MigProfiles();
  for (size_t p = 0; p < profiles.size(); ++p) {
    const model::MigProfile& prof = profiles[p];
    std::string name = model::MigProfileName(gpu, prof);
    std::string compact;
    for (char c : name) {
      if (c != '.' && c != '+') compact.push_back(c);
    }
    int sms = gpu.mig_multiprocessors[p];
    Quantity memory = Gib(static_cast<int64_t>(prof.memory_slices) * gpu.memory_gib / 8);
    for (int start : prof.starts) {
      api::Device d;
      d.name = util::Cat("gpu-", index, "-mig-", compact, "-", prof.gi_profile_id, "-", start);
      d.attributes["type"] = Str("mig");
      d.attributes["profile"] = Str(name);
      d.attributes["parentUUID"] = Str(MakeUuid(node, index));
      d.attributes["parentIndex"] = Int(index);
      d.attributes["giProfileId"] = Int(prof.gi_profile_id);
      d.attributes["placementStart"] = Int(start);
      CommonAttributes(d, gpu, spec, node, index);
      d.capacity["multiprocessors"] = Cap(Units(sms));
      d.capacity["copyEngines"] = Cap(Units(prof.copy_engines));
      d.capacity["decoders"] = Cap(Units(prof.decoders));
      d.capacity["jpegEngines"] = Cap(Units(prof.jpeg_engines));
      d.capacity["ofaEngines"] = Cap(Units(prof.ofa_engines));
      d.capacity["memory"] = Cap(memory);
      api::DeviceCounterConsumption use;
      use.counter_set = CounterSetName(index);
      use.counters["multiprocessors"] = {Units(sms)};
      use.counters["copy-engines"] = {Units(prof.copy_engines)};
      if (prof.decoders > 0) use.counters["decoders"] = {Units(prof.decoders)};
      if (prof.jpeg_engines > 0) use.counters["jpeg-engines"] = {Units(prof.jpeg_engines)};
      if (prof.ofa_engines > 0) use.counters["ofa-engines"] = {Units(prof.ofa_engines)};
      use.counters["memory"] = {memory};
      for (int s = start; s < start + prof.memory_slices; ++s) {
        use.counters[util::Cat("memory-slice-", s)] = {Units(1)};
      }
      d.consumes_counters.push_back(std::move(use));
      out.push_back(std::move(d));
    }
  }
  return out;
}

api::ResourceSlice NewSlice(const std::string& node, int n, int count) {
  api::ResourceSlice s;
  s.api_version = api::kResourceApiVersion;
  s.kind = "ResourceSlice";
  s.metadata.name = util::Cat(node, "-gpu.nvidia.com-", n);
  s.spec.driver = kNvidiaDriver;
  s.spec.pool = api::ResourcePool{node, 1, count};
  s.spec.node_name = node;
  return s;
}

api::Node MakeNode(const std::string& name, const model::GpuProduct& gpu, int gpus) {
  api::Node n;
  n.api_version = "v1";
  n.kind = "Node";
  n.metadata.name = name;
  n.metadata.labels["kubernetes.io/hostname"] = name;
  std::string product(gpu.product_name);
  for (char& c : product) {
    if (c == ' ') c = '-';
  }
  n.metadata.labels["nvidia.com/gpu.product"] = product;
  n.metadata.labels["nvidia.com/gpu.count"] = std::to_string(gpus);
  int64_t cpus = gpu.nvlink ? 24LL * gpus : 16LL * gpus;
  int64_t mem_gib = gpu.nvlink ? 256LL * gpus : 64LL * gpus;
  n.status.capacity["cpu"] = Units(cpus);
  n.status.capacity["memory"] = Gib(mem_gib);
  n.status.capacity["pods"] = Units(110);
  n.status.allocatable = n.status.capacity;
  return n;
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseClusterMix(std::string_view mix) {
  ClusterSpec spec;
  int64_t total_nodes = 0;
  size_t start = 0;
  while (start <= mix.size()) {
    size_t comma = mix.find(',', start);
    std::string_view item = mix.substr(start, comma == mix.npos ? mix.npos : comma - start);
    start = comma == mix.npos ? mix.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == item.npos) {
      return absl::InvalidArgumentError(
          util::Cat("mix entry \"", item, "\": expected PRODUCT[+mig]=NODES[xGPUS]"));
    }
    NodeGroupSpec g;
    std::string_view product = item.substr(0, eq);
    if (product.ends_with("+mig")) {
      g.dynamic_mig = true;
      product.remove_suffix(4);
    }
    g.product = std::string(product);
    const model::GpuProduct* gpu = model::FindGpuProduct(product);
    if (gpu == nullptr) {
      std::string known;
      for (const model::GpuProduct& p : model::GpuProducts()) util::Append(known, " ", p.key);
      return absl::InvalidArgumentError(util::Cat(
          "mix entry \"", item, "\": unknown GPU product \"", product, "\"; known:", known));
    }
    if (g.dynamic_mig && !gpu->mig_capable) {
      return absl::InvalidArgumentError(
          util::Cat("mix entry \"", item, "\": ", product, " has no MIG"));
    }
    std::string_view counts = item.substr(eq + 1);
    size_t x = counts.find('x');
    bool ok = absl::SimpleAtoi(std::string(counts.substr(0, x)), &g.nodes) && g.nodes >= 0;
    if (ok && x != counts.npos) {
      ok = absl::SimpleAtoi(std::string(counts.substr(x + 1)), &g.gpus_per_node) &&
           g.gpus_per_node >= 1 && g.gpus_per_node <= 16;
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          util::Cat("mix entry \"", item, "\": NODES must be a count and GPUS between 1 and 16"));
    }
    total_nodes += g.nodes;
    if (total_nodes > kMaxMixNodes) {
      return absl::InvalidArgumentError(util::Cat("mix entry \"", item, "\": brings the mix to ",
                                                  total_nodes, " nodes; at most ", kMaxMixNodes,
                                                  " in all"));
    }
    spec.groups.push_back(std::move(g));
  }
  if (spec.groups.empty()) return absl::InvalidArgumentError("the cluster mix is empty");
  return spec;
}

ClusterSpec ExampleClusterSpec() {
  ClusterSpec spec;
  spec.groups = {{"h100", 1, 8, false},
                 {"h200", 1, 8, false},
                 {"b200", 1, 8, false},
                 {"a100-80gb", 1, 4, true},
                 {"t4", 1, 4, false}};
  return spec;
}

std::vector<api::DeviceClass> NvidiaDeviceClasses() {
  std::vector<api::DeviceClass> out;
  for (const char* type : {"gpu", "mig"}) {
    api::DeviceClass c;
    c.api_version = api::kResourceApiVersion;
    c.kind = "DeviceClass";
    c.metadata.name = util::Cat(type, ".nvidia.com");
    c.spec.selectors.push_back(api::DeviceSelector{api::CelDeviceSelector{util::Cat(
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '", type,
        "'")}});
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<GeneratedCluster> GenerateCluster(const ClusterSpec& spec) {
  GeneratedCluster out;
  out.classes = NvidiaDeviceClasses();
  for (const NodeGroupSpec& g : spec.groups) {
    const model::GpuProduct* gpu = model::FindGpuProduct(g.product);
    if (gpu == nullptr) return absl::InvalidArgumentError("unknown GPU product " + g.product);
    for (int i = 0; i < g.nodes; ++i) {
      GeneratedNode gn;
      std::string name = util::Cat(g.product, g.dynamic_mig ? "-mig-" : "-", i);
      gn.node = MakeNode(name, *gpu, g.gpus_per_node);
      if (!g.dynamic_mig) {
        api::ResourceSlice s = NewSlice(name, 0, 1);
        for (int k = 0; k < g.gpus_per_node; ++k)
          s.spec.devices.push_back(FullGpu(*gpu, spec, name, k));
        gn.slices.push_back(std::move(s));
      } else {
        // Kubernetes 1.35: counter sets and devices live in separate slices of one pool.
        int count = 1 + g.gpus_per_node;
        api::ResourceSlice counters = NewSlice(name, 0, count);
        for (int k = 0; k < g.gpus_per_node; ++k) {
          counters.spec.shared_counters.push_back(
              api::CounterSet{CounterSetName(k), GpuCounters(*gpu)});
        }
        gn.slices.push_back(std::move(counters));
        for (int k = 0; k < g.gpus_per_node; ++k) {
          api::ResourceSlice s = NewSlice(name, k + 1, count);
          api::Device full = FullGpu(*gpu, spec, name, k);
          api::DeviceCounterConsumption all{CounterSetName(k), GpuCounters(*gpu)};
          full.consumes_counters.push_back(std::move(all));
          s.spec.devices.push_back(std::move(full));
          for (api::Device& d : MigDevices(*gpu, spec, name, k))
            s.spec.devices.push_back(std::move(d));
          gn.slices.push_back(std::move(s));
        }
      }
      out.nodes.push_back(std::move(gn));
    }
  }
  return out;
}

std::vector<api::SourcedObject> ToObjects(const GeneratedCluster& cluster) {
  std::vector<api::SourcedObject> objects;
  for (const api::DeviceClass& c : cluster.classes) objects.push_back({c, "generated", 0, true});
  for (const GeneratedNode& n : cluster.nodes) {
    for (const api::ResourceSlice& s : n.slices) objects.push_back({s, "generated", 0, true});
  }
  return objects;
}

}  // namespace gpuplane::sim
