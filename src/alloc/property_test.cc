// Property test: on 10,000 random small instances the allocator finds an allocation exactly
// when a brute-force enumerator does (shareable devices may serve a request twice), every
// allocation it returns passes the independent verifier, it keeps the first feasible firstAvailable
// choices, and (for claims of up to two requests) with an unbounded effort, with or without
// symmetry breaking, it reaches the best score the enumerator finds. Symmetry by classes (what
// nodes of more than 16 devices use) chooses exactly as pairwise symmetry. The enumerator tries
// every alternative of every request and every device subset, and asks the verifier; it shares no
// code with the search.
#include <functional>
#include <optional>
#include <random>
#include <tuple>

#include "alloc/allocator.h"
#include "alloc/node_index.h"
#include "alloc/verifier.h"
#include "api/loader.h"
#include "gtest/gtest.h"
#include "util/strings.h"

namespace gpuplane::alloc {
namespace {

struct Instance {
  std::string yaml;
  int in_use_mask = 0;
};

std::string RandomDevice(std::mt19937& rng, int i, bool& consumes) {
  auto pick = [&](std::initializer_list<const char*> xs) {
    return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  std::string d = util::Cat("  - name: d", i, "\n    attributes:\n      model: {string: \"",
                            pick({"a", "b"}), "\"}\n      mem: {int: ", pick({"1", "2", "3"}),
                            "}\n      group: {string: \"", pick({"x", "y"}), "\"}\n");
  bool shareable = chance(0.15);
  if (shareable) {
    d += "    allowMultipleAllocations: true\n    capacity:\n      slots:\n        value: \"4\"\n";
    if (chance(0.5)) {
      d += chance(0.5)
               ? "        requestPolicy: {default: \"1\", validValues: [\"1\", \"2\", \"4\"]}\n"
               : "        requestPolicy: {default: \"2\", validRange: {min: \"1\", max: \"3\", "
                 "step: \"2\"}}\n";
    }
  } else if (chance(0.3)) {
    d += "    capacity:\n      slots: {value: \"2\"}\n";
  }
  if (chance(0.15)) d += "    taints: [{key: flaky, value: \"yes\", effect: NoSchedule}]\n";
  consumes = chance(0.35);
  if (consumes) {
    d +=
        util::Cat("    consumesCounters:\n    - counterSet: cs\n      counters: {units: {value: \"",
                  pick({"1", "2"}), "\"}}\n");
  }
  return d;
}

std::string RandomRequest(std::mt19937& rng, int i) {
  auto pick = [&](std::initializer_list<const char*> xs) {
    return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  auto fields = [&](const std::string& indent, bool allow_admin) {
    std::string f = util::Cat(indent, "deviceClassName: ", pick({"any", "any", "model-a"}), "\n");
    const char* sel = pick({"", "", "device.attributes['gpu.nvidia.com'].mem >= 2",
                            "device.attributes['gpu.nvidia.com'].group == 'x'"});
    if (*sel) util::Append(f, indent, "selectors: [{cel: {expression: \"", sel, "\"}}]\n");
    if (chance(0.1)) {
      util::Append(f, indent, "allocationMode: All\n");
    } else {
      util::Append(f, indent, "count: ", pick({"1", "1", "2"}), "\n");
    }
    if (allow_admin && chance(0.05)) util::Append(f, indent, "adminAccess: true\n");
    if (chance(0.5)) util::Append(f, indent, "tolerations: [{key: flaky, operator: Exists}]\n");
    if (chance(0.2))
      util::Append(f, indent, "capacity: {requests: {slots: \"", pick({"1", "2"}), "\"}}\n");
    return f;
  };
  if (chance(0.3)) {
    return util::Cat("    - name: r", i, "\n      firstAvailable:\n      - name: s0\n",
                     fields("        ", false), "      - name: s1\n", fields("        ", false));
  }
  return util::Cat("    - name: r", i, "\n      exactly:\n", fields("        ", true));
}

Instance RandomInstance(std::mt19937& rng) {
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  int n = std::uniform_int_distribution<int>(2, 5)(rng);
  std::string devices;
  for (int i = 0; i < n; ++i) {
    bool consumes = false;
    devices += RandomDevice(rng, i, consumes);
  }
  Instance in;
  in.yaml =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: any}\nspec: {}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: model-a}\nspec:\n"
      "  selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].model == "
      "'a'\"}}]\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: counters}\nspec:\n"
      "  driver: gpu.nvidia.com\n  pool: {name: p, generation: 1, resourceSliceCount: 2}\n"
      "  nodeName: node-1\n  sharedCounters:\n  - name: cs\n    counters: {units: {value: \"3\"}}\n"
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: devices}\nspec:\n"
      "  driver: gpu.nvidia.com\n  pool: {name: p, generation: 1, resourceSliceCount: 2}\n"
      "  nodeName: node-1\n  devices:\n" +
      devices;
  int requests = std::uniform_int_distribution<int>(1, 3)(rng);
  std::string claim =
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, "
      "namespace: t}\nspec:\n  devices:\n    requests:\n";
  for (int i = 0; i < requests; ++i) claim += RandomRequest(rng, i);
  if (chance(0.35)) {
    claim += chance(0.5)
                 ? "    constraints: [{matchAttribute: gpu.nvidia.com/group}]\n"
                 : "    constraints: [{requests: [r0], distinctAttribute: gpu.nvidia.com/mem}]\n";
  }
  in.yaml += claim;
  in.in_use_mask = std::uniform_int_distribution<int>(0, 31)(rng) &
                   std::uniform_int_distribution<int>(0, 31)(rng);
  return in;
}

// Every choice of `count` devices from devices[start..] in lexicographic order (the search
// order of Kubernetes and of the allocator: what "first feasible" means), a shareable device
// possibly more than once; for allocationMode All (count < 0), every subset. Each choice is
// appended to `chosen` as request `request`'s alternative `a` while `visit` runs; stops when
// it returns true.
bool ForEachChoice(const model::Inventory& inv, const Alternative& alt, size_t request, size_t a,
                   size_t start, int64_t count, std::vector<Choice>& chosen,
                   const std::function<bool()>& visit) {
  const std::vector<model::DeviceId>& devices = inv.nodes()[0].devices;
  const size_t n = devices.size();
  if (count < 0) {
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      size_t before = chosen.size();
      for (size_t i = 0; i < n; ++i) {
        if (mask & (1u << i))
          chosen.push_back(Choice{0, request, a, devices[i], {}, alt.admin_access});
      }
      if (visit()) return true;
      chosen.resize(before);
    }
    return false;
  }
  if (count == 0) return visit();
  for (size_t i = start; i < n; ++i) {
    chosen.push_back(Choice{0, request, a, devices[i], {}, alt.admin_access});
    size_t next = inv.devices()[devices[i]].shareable ? i : i + 1;
    if (ForEachChoice(inv, alt, request, a, next, count - 1, chosen, visit)) return true;
    chosen.pop_back();
  }
  return false;
}

// Every alternative and device choice for each request, checked by the verifier.
bool BruteForce(const model::Inventory& inv, const model::AllocationState& state,
                const CompiledClaim& claim, std::vector<Choice>& chosen, size_t request) {
  if (request == claim.requests.size()) return Verify(inv, state, {&claim}, 0, chosen).empty();
  for (size_t a = 0; a < claim.requests[request].alternatives.size(); ++a) {
    const Alternative& alt = claim.requests[request].alternatives[a];
    if (ForEachChoice(inv, alt, request, a, 0, alt.all ? -1 : alt.count, chosen,
                      [&] { return BruteForce(inv, state, claim, chosen, request + 1); })) {
      return true;
    }
  }
  return false;
}

// The lowest score over every valid allocation that uses the given alternatives.
void BestScore(const model::Inventory& inv, const model::AllocationState& state,
               const CompiledClaim& claim, const Scorer& scorer,
               const std::vector<size_t>& alternatives, std::vector<Choice>& chosen, size_t request,
               std::optional<std::vector<int64_t>>& best) {
  if (request == claim.requests.size()) {
    if (!Verify(inv, state, {&claim}, 0, chosen).empty()) return;
    std::vector<int64_t> score;
    scorer.Score(state, chosen, score);
    if (!best || score < *best) best = score;
    return;
  }
  size_t a = alternatives[request];
  const Alternative& alt = claim.requests[request].alternatives[a];
  ForEachChoice(inv, alt, request, a, 0, alt.all ? -1 : alt.count, chosen, [&] {
    BestScore(inv, state, claim, scorer, alternatives, chosen, request + 1, best);
    return false;
  });
}

// The full 10,000 instances run in the release build; sanitizer builds check a sample.
#ifdef GPUPLANE_SANITIZED
constexpr int kInstances = 1500;
#else
constexpr int kInstances = 10000;
#endif

bool SameChoices(const Outcome& a, const Outcome& b) {
  auto key = [](const Outcome& o) {
    std::vector<std::tuple<size_t, size_t, size_t, model::DeviceId>> k;
    for (const Choice& ch : o.choices)
      k.emplace_back(ch.claim, ch.request, ch.alternative, ch.device);
    return std::make_pair(o.allocated, k);
  };
  return key(a) == key(b);
}

TEST(AllocatorPropertyTest, AgreesWithBruteForceAndPassesTheVerifier) {
  std::mt19937 rng(20261130);
  int instances = 0, feasible = 0, scored = 0, skipped = 0;
  for (int iter = 0; iter < kInstances; ++iter) {
    Instance in = RandomInstance(rng);
    api::Loader loader;
    loader.AddText(in.yaml, "random.yaml", api::Format::kYaml);
    api::LoadResult r = loader.Finish();
    std::string errors;
    for (const api::Diagnostic& d : r.diagnostics) errors += d.ToString() + "\n";
    ASSERT_EQ(r.errors(), 0u) << errors << in.yaml;
    model::Inventory inv = model::Inventory::Build(r.objects);
    ASSERT_EQ(inv.nodes().size(), 1u);
    model::AllocationState state(inv);
    for (model::DeviceId d : inv.nodes()[0].devices) {
      if ((in.in_use_mask & (1 << d)) && state.CountersFit(inv, d)) {
        ASSERT_TRUE(state.Allocate(inv, d, {}).ok());
      }
    }
    SelectorCache cache;
    const auto& claim_obj = std::get<api::ResourceClaim>(r.objects.back().object);
    absl::StatusOr<CompiledClaim> claim = CompileClaim("t", "c", claim_obj.spec, inv, cache);
    ASSERT_TRUE(claim.ok()) << claim.status();
    // Islands on an attribute constraints also read, so symmetry must respect both.
    DefaultScorer scorer(inv, {"gpu.nvidia.com/group"});
    Allocator allocator(inv, AllocatorOptions{.scorer = &scorer});
    Allocator exhaustive(inv, AllocatorOptions{.scorer = &scorer,
                                               .max_solutions = 1 << 30,
                                               .score_steps = 1 << 30,
                                               .symmetry = false});
    Allocator exhaustive_symmetric(
        inv, AllocatorOptions{.scorer = &scorer, .max_solutions = 1 << 30, .score_steps = 1 << 30});
    // The same searches with symmetry by classes (what nodes of more than 16 devices use)
    // instead of pairwise comparison: the relation is the same, so are the choices.
    Allocator by_class(inv, AllocatorOptions{.scorer = &scorer, .pairwise_symmetry_devices = 0});
    Allocator exhaustive_by_class(inv, AllocatorOptions{.scorer = &scorer,
                                                        .max_solutions = 1 << 30,
                                                        .score_steps = 1 << 30,
                                                        .pairwise_symmetry_devices = 0});
    Outcome o = allocator.Allocate({&*claim}, 0, state);
    ASSERT_TRUE(SameChoices(o, by_class.Allocate({&*claim}, 0, state)))
        << "symmetry by classes chose differently: instance " << iter << "\n"
        << in.yaml;
    std::vector<Choice> chosen;
    bool brute = BruteForce(inv, state, *claim, chosen, 0);
    // The node index only skips a node where the allocator fails: with all alternatives,
    // and with only each request's first subrequest (then an allocation needs a later one).
    NodeIndex index(inv, state);
    if (!index.MayFit({&*claim}, 0)) {
      ++skipped;
      ASSERT_FALSE(brute) << "the index skipped a feasible node: instance " << iter << "\n"
                          << in.yaml;
    }
    if (o.allocated && !index.MayFit({&*claim}, 0, 1)) {
      bool later = false;
      for (const Choice& ch : o.choices) later = later || ch.alternative > 0;
      ASSERT_TRUE(later) << "instance " << iter << "\n" << in.yaml;
    }
    if (o.allocated) {  // Refresh keeps the counts equal to a freshly built index
      model::AllocationState after = state;
      ASSERT_TRUE(allocator.Commit(o, {&*claim}, after).ok());
      NodeIndex moved(inv, state);
      NodeIndex fresh(inv, after);
      for (const CompiledRequest& req : claim->requests) {
        for (const Alternative& alt : req.alternatives) {
          moved.Intern(alt);
          fresh.Intern(alt);
        }
      }
      // `moved` reads `state`; replay the commit on it through Refresh.
      ASSERT_TRUE(allocator.Commit(o, {&*claim}, state).ok());
      for (const Choice& ch : o.choices) moved.Refresh(ch.device);
      for (const CompiledRequest& req : claim->requests) {
        for (const Alternative& alt : req.alternatives) {
          ASSERT_EQ(moved.Free(moved.Intern(alt), 0), fresh.Free(fresh.Intern(alt), 0))
              << "instance " << iter << "\n"
              << in.yaml;
        }
      }
      ASSERT_TRUE(allocator.Release(o.choices, state).ok());
    }
    ++instances;
    feasible += brute ? 1 : 0;
    ASSERT_EQ(o.allocated, brute) << "instance " << iter << "\n"
                                  << in.yaml << "\nin use mask " << in.in_use_mask;
    if (!o.allocated) continue;
    std::string problem = Verify(inv, state, {&*claim}, 0, o.choices);
    ASSERT_EQ(problem, "") << "instance " << iter << "\n" << in.yaml;
    // Scoring: the first feasible alternatives are kept, and with an unbounded effort the
    // search, with and without symmetry breaking, reaches the brute-force best score.
    std::vector<size_t> alternatives(claim->requests.size());
    for (const Choice& ch : chosen) alternatives[ch.request] = ch.alternative;
    for (const Choice& ch : o.choices) {
      ASSERT_EQ(ch.alternative, alternatives[ch.request]) << "instance " << iter << "\n" << in.yaml;
    }
    if (claim->requests.size() > 2) continue;  // keeps the enumeration affordable
    std::optional<std::vector<int64_t>> best;
    std::vector<Choice> scratch;
    BestScore(inv, state, *claim, scorer, alternatives, scratch, 0, best);
    ASSERT_TRUE(best.has_value());
    for (const Allocator* a : {&exhaustive, &exhaustive_symmetric, &exhaustive_by_class}) {
      Outcome full = a->Allocate({&*claim}, 0, state);
      ASSERT_TRUE(full.allocated);
      std::vector<int64_t> score;
      scorer.Score(state, full.choices, score);
      ASSERT_EQ(score, *best) << "instance " << iter
                              << (a == &exhaustive ? " (no symmetry)" : " (symmetry)") << "\n"
                              << in.yaml;
    }
    ++scored;
  }
  std::printf(
      "  %d instances, %d feasible, %d infeasible: zero disagreements; %d best scores match; "
      "the node index skipped %d, all infeasible\n",
      instances, feasible, instances - feasible, scored, skipped);
  EXPECT_GT(feasible, kInstances / 10);
  EXPECT_GT(instances - feasible, kInstances / 10);
}

}  // namespace
}  // namespace gpuplane::alloc
