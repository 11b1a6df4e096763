// Gang property test: on 5,000 random small clusters (mixed models, NVLink domains, a
// dynamic-MIG GPU with shared counters, devices already in use) and gangs (templates, a
// claim shared by two members, firstAvailable MIG-else-GPU, matchAttribute, minMember below
// the member count), the Session places the gang exactly when some placement exists, and
// every allocation it makes passes the verifier. The reference enumerates every assignment of
// members to nodes (or to none, down to minMember) and allocates each node's members jointly
// with the allocator (itself proven complete against brute force in alloc/property_test.cc).
// Some members prefer a node softly, which must never change whether the gang is placed.
#include <random>

#include "alloc/allocator.h"
#include "api/loader.h"
#include "api/testing.h"
#include "gtest/gtest.h"
#include "sched/pass.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

using api::testing::Rand;

constexpr char kClasses[] = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig}
spec:
  selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].type == 'mig'"}}]
)";

std::string Gpu(int i, const std::string& model, const std::string& domain) {
  return util::Cat("  - {name: gpu-", i,
                   ", attributes: {type: {string: gpu}, model: {string: ", model,
                   "}, nvlinkDomain: {string: ", domain, "}}}\n");
}

std::string Node(Rand& r, int n) {
  std::string name = util::Cat("n", n);
  std::string devices, counters;
  int gpus = r.Int(1, 3);
  std::string model = r.Chance(0.5) ? "a" : "b";
  for (int i = 0; i < gpus; ++i) {
    devices += Gpu(i, model, util::Cat(name, r.Chance(0.6) ? "-x" : "-y"));
  }
  if (r.Chance(0.4)) {  // a dynamic-MIG GPU: two small slices or one big one
    counters = "  sharedCounters: [{name: mig-0, counters: {slices: {value: \"2\"}}}]\n";
    for (int i = 0; i < 2; ++i) {
      devices += util::Cat("  - {name: mig-small-", i,
                           ", attributes: {type: {string: mig}, profile: {string: small}}, "
                           "consumesCounters: [{counterSet: mig-0, counters: {slices: {value: "
                           "\"1\"}}}]}\n");
    }
    devices +=
        "  - {name: mig-big, attributes: {type: {string: mig}, profile: {string: big}}, "
        "consumesCounters: [{counterSet: mig-0, counters: {slices: {value: \"2\"}}}]}\n";
  }
  int slices = counters.empty() ? 1 : 2;
  std::string pool =
      util::Cat("  pool: {name: ", name, ", generation: 1, resourceSliceCount: ", slices,
                "}\n  nodeName: ", name, "\n");
  std::string out;
  if (!counters.empty()) {  // counter sets in a slice of their own (Kubernetes 1.35)
    out += util::Cat("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ",
                     name, "-counters}\nspec:\n  driver: gpu.nvidia.com\n", pool, counters);
  }
  out +=
      util::Cat("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", name,
                "}\nspec:\n  driver: gpu.nvidia.com\n", pool, "  devices:\n", devices);
  if (r.Chance(0.3)) {  // gpu-0 already in use
    out += util::Cat(
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: used-", name,
        ", namespace: t}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: "
        "gpu}}]}}\nstatus:\n  allocation:\n    devices:\n      results: [{request: gpu, driver: "
        "gpu.nvidia.com, pool: ",
        name, ", device: gpu-0}]\n");
  }
  return out;
}

std::string Request(Rand& r) {
  switch (r.Int(0, 4)) {
    case 0:
      return "{name: r, exactly: {deviceClassName: gpu}}";
    case 1:
      return "{name: r, exactly: {deviceClassName: gpu, count: 2}}";
    case 2:
      return "{name: r, exactly: {deviceClassName: gpu, selectors: [{cel: {expression: "
             "\"device.attributes['gpu.nvidia.com'].model == 'b'\"}}]}}";
    case 3:
      return "{name: r, firstAvailable: [{name: small, deviceClassName: mig, selectors: [{cel: "
             "{expression: \"device.attributes['gpu.nvidia.com'].profile == 'small'\"}}]}, "
             "{name: whole, deviceClassName: gpu}]}";
    default:
      return "{name: r, exactly: {deviceClassName: mig}}";
  }
}

// A soft preference for one of the nodes, so the Session tries its preference-first pass
// before the search (the gang must be placed exactly as often either way).
std::string Preference(Rand& r, int nodes) {
  if (!r.Chance(0.4)) return "";
  return util::Cat(
      "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: ",
      r.Int(1, 100), ", preference: {matchFields: [{key: metadata.name, operator: In, values: [n",
      r.Int(0, nodes - 1), "]}]}}]}}\n");
}

std::string Workload(Rand& r, int members, int min, int nodes) {
  std::string out = util::Cat(
      "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, "
      "namespace: t}\nspec: {minMember: ",
      min, "}\n");
  bool shared = members >= 2 && r.Chance(0.3);
  if (shared) {
    out +=
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, "
        "namespace: t}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: "
        "gpu}}]}}\n";
  }
  for (int m = 0; m < members; ++m) {
    std::string constraint =
        r.Chance(0.3) ? ", constraints: [{matchAttribute: gpu.nvidia.com/nvlinkDomain}]" : "";
    out += util::Cat(
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
        "metadata: {name: m",
        m, ", namespace: t}\nspec: {spec: {devices: {requests: [", Request(r), "]", constraint,
        "}}}\n");
    std::string claims = util::Cat("{name: own, resourceClaimTemplateName: m", m, "}");
    if (shared && m < 2) claims += ", {name: s, resourceClaimName: shared}";
    out += util::Cat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p", m,
                     ", namespace: t, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec:\n"
                     "  resourceClaims: [",
                     claims, "]\n  containers: [{name: c}]\n", Preference(r, nodes));
  }
  return out;
}

// Whether some assignment of members to nodes (or none) with at least `min` placed fits.
class Reference {
 public:
  Reference(const std::vector<api::SourcedObject>& cluster, const PodSet& pods)
      : inv_(model::Inventory::Build(cluster)), state_(inv_), pods_(pods) {
    state_.ApplyAllocatedClaims(inv_, cluster);
    for (const PodInfo& p : pods.pods) {
      std::vector<std::pair<std::string, alloc::CompiledClaim>> claims;
      for (const ClaimUse& u : p.claims) {
        absl::StatusOr<alloc::CompiledClaim> c =
            alloc::CompileClaim("t", u.claim->metadata.name, u.claim->spec, inv_, cache_);
        if (c.ok()) claims.emplace_back(u.key, std::move(*c));
      }
      claims_.push_back(std::move(claims));
    }
  }

  bool Feasible(int min) {
    std::vector<int> where(pods_.pods.size(), -1);
    return Assign(0, where, min);
  }

 private:
  bool Assign(size_t i, std::vector<int>& where, int min) {
    if (i == where.size()) return Check(where, min);
    for (int n = -1; n < static_cast<int>(inv_.nodes().size()); ++n) {
      where[i] = n;
      if (Assign(i + 1, where, min)) return true;
    }
    return false;
  }

  bool Check(const std::vector<int>& where, int min) {
    int placed = 0;
    std::map<std::string, int> claim_node;
    for (size_t i = 0; i < where.size(); ++i) {
      if (where[i] < 0) continue;
      ++placed;
      for (const auto& [key, c] : claims_[i]) {  // a shared claim puts its pods on one node
        auto [it, fresh] = claim_node.emplace(key, where[i]);
        if (!fresh && it->second != where[i]) return false;
      }
    }
    if (placed < min) return false;
    alloc::Allocator allocator(inv_, alloc::AllocatorOptions{.explain = false});
    for (model::NodeId n = 0; n < inv_.nodes().size(); ++n) {
      std::vector<const alloc::CompiledClaim*> claims;
      std::set<std::string> seen;
      for (size_t i = 0; i < where.size(); ++i) {
        if (where[i] != static_cast<int>(n)) continue;
        for (const auto& [key, c] : claims_[i]) {
          if (seen.insert(key).second) claims.push_back(&c);
        }
      }
      if (!claims.empty() && !allocator.Allocate(claims, n, state_).allocated) return false;
    }
    return true;
  }

  model::Inventory inv_;
  model::AllocationState state_;
  const PodSet& pods_;
  alloc::SelectorCache cache_;
  std::vector<std::vector<std::pair<std::string, alloc::CompiledClaim>>> claims_;
};

#ifdef GPUPLANE_SANITIZED
constexpr int kInstances = 400;
#else
constexpr int kInstances = 5000;
#endif

TEST(GangPropertyTest, PlacesAGangExactlyWhenSomePlacementExists) {
  Rand r{std::mt19937(20261201)};
  int feasible = 0, partial = 0;
  for (int iter = 0; iter < kInstances; ++iter) {
    int nodes = r.Int(1, 3), members = r.Int(1, 3);
    int min = members > 1 && r.Chance(0.3) ? members - 1 : members;
    std::string yaml = kClasses;
    for (int n = 0; n < nodes; ++n) yaml += Node(r, n);
    yaml += Workload(r, members, min, nodes);
    api::LoadResult lr = api::testing::LoadText(yaml);
    ASSERT_EQ(lr.errors(), 0u) << api::testing::Diagnostics(lr) << yaml;
    std::vector<api::SourcedObject> cluster, work;
    for (const api::SourcedObject& o : lr.objects) {
      const auto* c = std::get_if<api::ResourceClaim>(&o.object);
      bool state = std::holds_alternative<api::ResourceSlice>(o.object) ||
                   std::holds_alternative<api::DeviceClass>(o.object) ||
                   (c != nullptr && c->status.allocation);
      (state ? cluster : work).push_back(o);
    }
    absl::StatusOr<PassResult> pass = RunPass(cluster, work, {.verify = true});
    ASSERT_TRUE(pass.ok()) << pass.status();
    int placed = 0;
    for (const Decision& d : pass->decisions) {
      ASSERT_NE(d.status.code, Code::kError) << Render(d.status) << "\n" << yaml;
      placed += d.status.ok() ? 1 : 0;
    }
    bool scheduled = placed >= min;
    ASSERT_TRUE(placed == 0 || scheduled) << "a partial gang escaped: instance " << iter << "\n"
                                          << yaml;
    Reference ref(cluster, pass->pods);
    bool exists = ref.Feasible(min);
    ASSERT_EQ(scheduled, exists) << "instance " << iter << "\n"
                                 << yaml << "\n"
                                 << (pass->decisions.empty() ? ""
                                                             : Render(pass->decisions[0].status));
    feasible += exists ? 1 : 0;
    partial += scheduled && placed < members ? 1 : 0;
  }
  std::printf("  %d gangs: %d placed (%d with fewer than all members), %d not; 0 misses\n",
              kInstances, feasible, partial, kInstances - feasible);
  EXPECT_GT(feasible, kInstances / 5);
  EXPECT_GT(kInstances - feasible, kInstances / 10);
}

}  // namespace
}  // namespace gpuplane::sched
