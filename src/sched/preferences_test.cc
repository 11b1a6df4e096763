// Scoring by preferences, property-tested: on random clusters (nodes in zones or none, some
// with a PreferNoSchedule taint, some without a free GPU), random bound pods (some with a
// required pod affinity, preferred pod affinity or preferred anti-affinity term, which score the
// pending pod when they match it) and one pending pod with random preferred node affinity,
// preferred pod (anti-)affinity, ScheduleAnyway spread and maybe a toleration, the pass puts
// the pod on a node whose score is the highest among the
// nodes it fits, the score computed here the plain way (kube-scheduler's formulas, each plugin
// normalized over those nodes). Also: a pod without preferences on a cluster without the taint
// keeps the policy's order.
#include "sched/preferences.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <variant>

#include "api/loader.h"
#include "gtest/gtest.h"
#include "sched/pass.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

struct NodeSpec {
  std::string zone;  // "": no zone label
  bool tainted = false;
  bool gpu = true;  // a free GPU (else none: the pod does not fit)
};
// A bound pod's term: required pod affinity (scores 1), preferred affinity or anti-affinity.
struct BoundTerm {
  enum Kind { kRequired, kPreferred, kPreferredAnti } kind;
  int weight;
  std::string app;
  std::string key;
};
struct Bound {
  int node;
  std::string app;
  std::vector<BoundTerm> terms;
};
struct NodeTerm {
  int weight;
  std::string zone;
};
struct PodTerm {
  int weight;
  bool anti;
  std::string app;
  std::string key;
};
struct PrefInstance {
  std::vector<NodeSpec> nodes;
  std::vector<Bound> bound;
  std::vector<NodeTerm> node_terms;
  std::vector<PodTerm> pod_terms;
  std::string spread_key;  // "": none
  int max_skew = 1;
  bool tolerates = false;
};

const char* kHost = "kubernetes.io/hostname";
const char* kZone = "topology.kubernetes.io/zone";

PrefInstance RandomPrefInstance(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* zones[] = {"", "a", "b", "c"};
  const char* apps[] = {"a", "b"};
  PrefInstance in;
  const int n = pick(2, 6);
  for (int i = 0; i < n; ++i)
    in.nodes.push_back({zones[pick(0, 3)], pick(0, 3) == 0, pick(0, 4) > 0});
  if (std::none_of(in.nodes.begin(), in.nodes.end(), [](const NodeSpec& s) { return s.gpu; })) {
    in.nodes[0].gpu = true;
  }
  for (int i = pick(0, 8); i > 0; --i) {
    Bound b{pick(0, n - 1), apps[pick(0, 1)], {}};
    if (pick(0, 2) == 0) {
      b.terms.push_back({static_cast<BoundTerm::Kind>(pick(0, 2)), pick(1, 100), apps[pick(0, 1)],
                         pick(0, 1) ? kHost : kZone});
    }
    in.bound.push_back(std::move(b));
  }
  for (int i = pick(0, 2); i > 0; --i) in.node_terms.push_back({pick(1, 100), zones[pick(1, 3)]});
  for (int i = pick(0, 2); i > 0; --i) {
    in.pod_terms.push_back(
        {pick(1, 100), pick(0, 1) == 1, apps[pick(0, 1)], pick(0, 1) ? kHost : kZone});
  }
  if (pick(0, 1) == 1) in.spread_key = pick(0, 1) ? kHost : kZone;
  in.max_skew = pick(1, 2);
  in.tolerates = pick(0, 2) == 0;
  return in;
}

std::string Yaml(const PrefInstance& in) {
  std::string out =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
      "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n";
  for (size_t i = 0; i < in.nodes.size(); ++i) {
    const NodeSpec& s = in.nodes[i];
    util::Append(out, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n", i,
                 "\n  labels: {kubernetes.io/hostname: n", i,
                 s.zone.empty() ? "" : ", topology.kubernetes.io/zone: " + s.zone, "}\n",
                 s.tainted ? "spec: {taints: [{key: soon, effect: PreferNoSchedule}]}\n" : "");
    if (!s.gpu) continue;
    util::Append(out,
                 "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: ", "{name: n",
                 i, "}\nspec:\n  driver: gpu.example.com\n  pool: {name: n", i,
                 ", generation: 1, resourceSliceCount: 1}\n  nodeName: n", i,
                 "\n  devices: [{name: gpu-0}]\n");
  }
  for (size_t b = 0; b < in.bound.size(); ++b) {
    util::Append(out, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b", b,
                 ", namespace: t, labels: {app: ", in.bound[b].app, "}}\nspec:\n  nodeName: n",
                 in.bound[b].node, "\n  containers: [{name: c}]\n");
    for (const BoundTerm& t : in.bound[b].terms) {
      const std::string term =
          util::Cat("{labelSelector: {matchLabels: {app: ", t.app, "}}, topologyKey: ", t.key, "}");
      util::Append(
          out, "  affinity:\n",
          t.kind == BoundTerm::kPreferredAnti ? "    podAntiAffinity:\n" : "    podAffinity:\n",
          t.kind == BoundTerm::kRequired
              ? "      requiredDuringSchedulingIgnoredDuringExecution: [" + term + "]\n"
              : util::Cat("      preferredDuringSchedulingIgnoredDuringExecution: "
                          "[{weight: ",
                          t.weight, ", podAffinityTerm: ", term, "}]\n"));
    }
  }
  out +=
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one, "
      "namespace: t}\nspec: {spec: {devices: {requests: [{name: gpu, exactly: "
      "{deviceClassName: gpu}}]}}}\n";
  out +=
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: t, labels: {app: a}}\n"
      "spec:\n  containers: [{name: c, resources: {claims: [{name: gpu}]}}]\n"
      "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]\n";
  if (in.tolerates) out += "  tolerations: [{key: soon, operator: Exists}]\n";
  if (!in.spread_key.empty()) {
    util::Append(out, "  topologySpreadConstraints: [{maxSkew: ", in.max_skew,
                 ", topologyKey: ", in.spread_key,
                 ", whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: a}}}]\n");
  }
  out += "  affinity:\n";
  if (!in.node_terms.empty()) {
    out += "    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n";
    for (const NodeTerm& t : in.node_terms) {
      util::Append(out, "      - {weight: ", t.weight,
                   ", preference: {matchExpressions: [{key: ", kZone, ", operator: In, values: [",
                   t.zone, "]}]}}\n");
    }
  }
  for (bool anti : {false, true}) {
    std::string terms;
    for (const PodTerm& t : in.pod_terms) {
      if (t.anti != anti) continue;
      util::Append(terms, "      - {weight: ", t.weight,
                   ", podAffinityTerm: {labelSelector: {matchLabels: {app: ", t.app,
                   "}}, topologyKey: ", t.key, "}}\n");
    }
    if (terms.empty()) continue;
    util::Append(out, anti ? "    podAntiAffinity:\n" : "    podAffinity:\n",
                 "      preferredDuringSchedulingIgnoredDuringExecution:\n", terms);
  }
  return out;
}

std::string LabelOf(const PrefInstance& in, int node, const std::string& key) {
  return key == kHost ? util::Cat("n", node) : in.nodes[node].zone;
}

// The score of each node in `fits` (by position), kube-scheduler's way.
std::vector<int64_t> Reference(const PrefInstance& in, const std::vector<int>& fits) {
  const size_t k = fits.size();
  std::vector<int64_t> affinity(k, 0), taint(k, 0), pods(k, 0), spread(k, 0);
  for (size_t i = 0; i < k; ++i) {
    const int n = fits[i];
    for (const NodeTerm& t : in.node_terms)
      affinity[i] += in.nodes[n].zone == t.zone ? t.weight : 0;
    taint[i] = in.nodes[n].tainted && !in.tolerates ? 1 : 0;
    for (const PodTerm& t : in.pod_terms) {
      const std::string here = LabelOf(in, n, t.key);
      if (here.empty()) continue;
      for (const Bound& b : in.bound) {
        if (b.app == t.app && LabelOf(in, b.node, t.key) == here)
          pods[i] += t.anti ? -t.weight : t.weight;
      }
    }
    // Bound pods' terms matching the pending pod (app a, their namespace), in their domain.
    for (const Bound& b : in.bound) {
      for (const BoundTerm& t : b.terms) {
        const std::string there = LabelOf(in, b.node, t.key);
        if (t.app != "a" || there.empty() || LabelOf(in, n, t.key) != there) continue;
        pods[i] += t.kind == BoundTerm::kRequired    ? 1
                   : t.kind == BoundTerm::kPreferred ? t.weight
                                                     : -t.weight;
      }
    }
  }
  const int64_t high_affinity = *std::max_element(affinity.begin(), affinity.end());
  const int64_t high_taint = *std::max_element(taint.begin(), taint.end());
  const auto [low_pods, high_pods] = std::minmax_element(pods.begin(), pods.end());
  const int64_t lo = *low_pods, span = *high_pods - *low_pods;
  std::vector<char> ignored(k, 0);
  if (!in.spread_key.empty()) {
    std::set<std::string> domains;
    for (size_t n = 0; n < in.nodes.size(); ++n) {
      std::string v = LabelOf(in, static_cast<int>(n), in.spread_key);
      if (!v.empty()) domains.insert(v);
    }
    const double weight = std::log(static_cast<double>(domains.size()) + 2);
    int64_t low = INT64_MAX, high = 0;
    for (size_t i = 0; i < k; ++i) {
      const std::string here = LabelOf(in, fits[i], in.spread_key);
      if (here.empty()) {
        ignored[i] = 1;
        continue;
      }
      int count = 0;
      for (const Bound& b : in.bound) {
        count += b.app == "a" && LabelOf(in, b.node, in.spread_key) == here ? 1 : 0;
      }
      spread[i] = std::llround(count * weight + (in.max_skew - 1));
      low = std::min(low, spread[i]);
      high = std::max(high, spread[i]);
    }
    for (size_t i = 0; i < k; ++i) {
      spread[i] = ignored[i] ? 0 : high == 0 ? 100 : 100 * (high + low - spread[i]) / high;
    }
  }
  std::vector<int64_t> out(k);
  for (size_t i = 0; i < k; ++i) {
    const int64_t a = high_affinity > 0 ? affinity[i] * 100 / high_affinity : 0;
    const int64_t t = high_taint > 0 ? 100 - taint[i] * 100 / high_taint : 100;
    const int64_t p = span > 0 ? (pods[i] - lo) * 100 / span : 0;
    out[i] = 2 * a + 3 * t + 2 * p + 2 * spread[i];
  }
  return out;
}

absl::StatusOr<PassResult> Pass(const std::string& yaml) {
  api::Loader loader;
  loader.AddText(yaml, "instance.yaml", api::Format::kYaml);
  api::LoadResult lr = loader.Finish();
  for (const api::Diagnostic& d : lr.diagnostics) {
    if (d.is_error()) return absl::InvalidArgumentError(d.ToString());
  }
  std::vector<api::SourcedObject> cluster, work;
  for (api::SourcedObject& o : lr.objects) {
    bool is_work = std::holds_alternative<api::Pod>(o.object) ||
                   std::holds_alternative<api::ResourceClaimTemplate>(o.object);
    (is_work ? work : cluster).push_back(std::move(o));
  }
  return RunPass(cluster, work, SessionOptions{.verify = true});
}

TEST(PreferencesTest, ThePodGoesToTheBestScoredNodeItFits) {
  std::mt19937 rng(20261206);
  int decided_by_score = 0;
  for (int round = 0; round < 2000; ++round) {
    const PrefInstance in = RandomPrefInstance(rng);
    const std::string yaml = Yaml(in);
    SCOPED_TRACE(yaml);
    absl::StatusOr<PassResult> r = Pass(yaml);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->pods.pods.back().key, "t/p");
    const Decision& d = r->decisions.back();
    ASSERT_TRUE(d.status.ok()) << "round " << round;
    std::vector<int> fits;
    for (size_t n = 0; n < in.nodes.size(); ++n) {
      if (in.nodes[n].gpu) fits.push_back(static_cast<int>(n));
    }
    const std::vector<int64_t> scores = Reference(in, fits);
    const int64_t best = *std::max_element(scores.begin(), scores.end());
    const std::string chosen = r->snapshot->inventory().nodes()[d.node].name;
    int64_t got = -1;
    for (size_t i = 0; i < fits.size(); ++i) {
      if (util::Cat("n", fits[i]) == chosen) got = scores[i];
    }
    EXPECT_EQ(got, best) << "round " << round << ": " << chosen;
    decided_by_score += std::count(scores.begin(), scores.end(), best) == 1 ? 1 : 0;
  }
  std::printf("%d of 2000 rounds with one best node\n", decided_by_score);
  EXPECT_GT(decided_by_score, 600);
}

TEST(PreferencesTest, OnlyPodsWithPreferencesAsk) {
  api::Pod plain;
  EXPECT_FALSE(HasPreferences(plain.spec));
  api::Pod soft = plain;
  soft.spec.topology_spread_constraints.push_back(
      {.max_skew = 1, .topology_key = kZone, .when_unsatisfiable = "ScheduleAnyway"});
  EXPECT_TRUE(HasPreferences(soft.spec));
  soft.spec.topology_spread_constraints[0].when_unsatisfiable = "DoNotSchedule";
  EXPECT_FALSE(HasPreferences(soft.spec));
  api::Pod node = plain;
  node.spec.affinity.emplace().node_affinity.emplace().preferred.push_back({.weight = 1});
  EXPECT_TRUE(HasPreferences(node.spec));
}

}  // namespace
}  // namespace gpuplane::sched
