// Inter-pod rules on a small cluster (zones a and b, two nodes each): counting pods placed
// beside the pod (`also`, a gang's members going to one node together) gives the answer that
// placing them first gives, on random placements; minDomains and the node policies of spread
// constraints; and the snapshot's version and anti-affinity index follow placements.
#include "sched/pod_topology.h"

#include <random>

#include "api/loader.h"
#include "gtest/gtest.h"
#include "sched/pod_set.h"
#include "sched/snapshot.h"
#include "sched/statement.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

std::string Nodes() {
  std::string out;
  const char* zones[] = {"a", "a", "b", "b"};
  for (int n = 0; n < 4; ++n) {
    util::Append(out, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n", n,
                 "\n  labels: {kubernetes.io/hostname: n", n,
                 ", topology.kubernetes.io/zone: ", zones[n], "}\n",
                 n == 3 ? "spec: {taints: [{key: gpu, effect: NoSchedule}]}\n" : "");
  }
  return out;
}

// A pod of namespace t labelled app=`app` with `spec` (YAML lines under spec, indented 2).
std::string Pod(const std::string& name, const std::string& app, const std::string& spec = "") {
  return util::Cat("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
                   "\n  namespace: t\n  labels: {app: ", app,
                   "}\nspec:\n  containers: [{name: c}]\n", spec);
}

std::string Anti(const std::string& app, const std::string& key) {
  return util::Cat("  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuring",
                   "Execution:\n      - labelSelector: {matchLabels: {app: ", app,
                   "}}\n        topologyKey: ", key, "\n");
}

std::string Spread(const std::string& extra) {
  return util::Cat("  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: ",
                   "topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, ",
                   "labelSelector: {matchLabels: {app: s}}", extra, "}\n");
}

struct World {
  api::LoadResult loaded;
  PodSet pods;
  std::unique_ptr<Snapshot> snap;

  explicit World(const std::string& text) {
    api::Loader loader;
    loader.AddText(text, "world.yaml", api::Format::kYaml);
    loaded = loader.Finish();
    EXPECT_EQ(loaded.errors(), 0u);
    pods = BuildPodSet(loaded.objects);
    snap = Snapshot::Build(loaded.objects);
  }
  const PodInfo& pod(const std::string& name) const {
    for (const PodInfo& p : pods.pods) {
      if (p.key == "t/" + name) return p;
    }
    ADD_FAILURE() << "no pod " << name;
    return pods.pods.front();
  }
  void Place(Statement& st, const PodInfo& p, model::NodeId n) {
    PodPlacement pl{p.key, n};
    pl.labels = p.labels;
    ASSERT_TRUE(st.Place(std::move(pl), {}).ok());
  }
  std::optional<Rule> Check(const PodInfo& p, model::NodeId n,
                            const std::vector<const PodInfo*>& also = {}) const {
    return PodTopology(*snap, p).Check(*snap, n, also);
  }
};

TEST(PodTopologyTest, PodsBesideCountAsPlacedOnRandomPlacements) {
  // Six kinds of pods: anti-affinity by host or zone, affinity by zone, spread, plain.
  std::vector<std::pair<std::string, std::string>> kinds = {
      {"s", Spread("")},
      {"h", Anti("h", "kubernetes.io/hostname")},
      {"z", Anti("s", "topology.kubernetes.io/zone")},
      {"f",
       "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
       "      - labelSelector: {matchLabels: {app: h}}\n"
       "        topologyKey: topology.kubernetes.io/zone\n"},
      {"s", Spread(", minDomains: 3")},
      {"h", ""}};
  std::string text = Nodes();
  for (int i = 0; i < 24; ++i) {
    const auto& [app, spec] = kinds[i % kinds.size()];
    text += Pod(util::Cat("p", i), app, spec);
  }
  World w(text);
  ASSERT_EQ(w.pods.pods.size(), 24u);
  std::mt19937 rng(7);
  int rejected = 0, checked = 0;
  for (int round = 0; round < 300; ++round) {
    Statement st(*w.snap);
    std::vector<size_t> order(w.pods.pods.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    size_t placed = rng() % 10, beside = 1 + rng() % 3;
    for (size_t i = 0; i < placed; ++i) w.Place(st, w.pods.pods[order[i]], rng() % 4);
    const PodInfo& pod = w.pods.pods[order[placed + beside]];
    auto node = static_cast<model::NodeId>(rng() % 4);
    std::vector<const PodInfo*> also;
    for (size_t i = placed; i < placed + beside; ++i) also.push_back(&w.pods.pods[order[i]]);
    std::optional<Rule> counted = w.Check(pod, node, also);
    for (const PodInfo* a : also) w.Place(st, *a, node);
    std::optional<Rule> placed_first = w.Check(pod, node);
    ASSERT_EQ(counted, placed_first) << "round " << round;
    rejected += counted ? 1 : 0;
    ++checked;
  }
  EXPECT_GT(rejected, checked / 5) << "the rules should reject often on random placements";
  EXPECT_LT(rejected, checked) << "and not always";
}

TEST(PodTopologyTest, MinDomainsAndNodePolicies) {
  // Two spread pods placed in zone a; zone b's nodes: n2 plain, n3 tainted.
  World w(Nodes() + Pod("a0", "s") + Pod("a1", "s") + Pod("plain", "s", Spread("")) +
          Pod("min3", "s", Spread(", minDomains: 3")) +
          Pod("onlyb", "s", "  nodeSelector: {topology.kubernetes.io/zone: b}\n" + Spread("")) +
          Pod("ignore", "s",
              "  nodeSelector: {topology.kubernetes.io/zone: b}\n" +
                  Spread(", nodeAffinityPolicy: Ignore")) +
          Pod("taints", "s", Spread(", nodeTaintsPolicy: Honor")));
  Statement st(*w.snap);
  w.Place(st, w.pod("a0"), 0);
  w.Place(st, w.pod("a1"), 1);
  // Zone a holds 2, zone b 0: only b is within a skew of 1.
  EXPECT_EQ(w.Check(w.pod("plain"), 0), Rule::kTopologySpread);
  EXPECT_EQ(w.Check(w.pod("plain"), 2), std::nullopt);
  // Two domains, fewer than minDomains 3: the minimum counts as 0, and b with this pod is 1.
  EXPECT_EQ(w.Check(w.pod("min3"), 2), std::nullopt);
  // Only zone b is eligible under the pod's nodeSelector: a's pods are not counted.
  EXPECT_EQ(w.Check(w.pod("onlyb"), 2), std::nullopt);
  // Ignoring the nodeSelector, zone a (2 pods) is a domain and b with this pod has 1: fine.
  EXPECT_EQ(w.Check(w.pod("ignore"), 2), std::nullopt);
  w.Place(st, w.pod("plain"), 2);
  // a 2, b 1: b may take a second (skew 2 - 1), a not a third.
  EXPECT_EQ(w.Check(w.pod("taints"), 3), std::nullopt);
  EXPECT_EQ(w.Check(w.pod("taints"), 0), Rule::kTopologySpread);
  // With minDomains 3 and two domains the minimum is 0: b with a second pod is a skew of 2.
  EXPECT_EQ(w.Check(w.pod("min3"), 3), Rule::kTopologySpread);
  // Honoring taints, n3 (untolerated taint) is not eligible, but n2 still makes zone b.
  EXPECT_EQ(w.Check(w.pod("taints"), 2), std::nullopt);
}

TEST(PodTopologyTest, EachConstraintCountsTheNodesItsOwnPoliciesAllow) {
  // Zone a holds 1 spread pod, zone b 2 (on n2); the pods ask for zone b by nodeSelector.
  auto two = [](const std::string& zone_policy) {
    return util::Cat(
        "  nodeSelector: {topology.kubernetes.io/zone: b}\n", "  topologySpreadConstraints:\n",
        "  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ",
        "DoNotSchedule, labelSelector: {matchLabels: {app: s}}}\n",
        "  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ",
        "DoNotSchedule, labelSelector: {matchLabels: {app: s}}, nodeAffinityPolicy: ", zone_policy,
        "}\n");
  };
  World w(Nodes() + Pod("a0", "s") + Pod("b0", "s") + Pod("b1", "s") +
          Pod("ignore", "s", two("Ignore")) + Pod("honor", "s", two("Honor")));
  Statement st(*w.snap);
  w.Place(st, w.pod("a0"), 0);
  w.Place(st, w.pod("b0"), 2);
  w.Place(st, w.pod("b1"), 2);
  // By host (n2 and n3 eligible): n3 with it is 1 over 0, fine for both. By zone: ignoring
  // the nodeSelector, a (1) counts and b with it would be 3; honoring it, b is the only domain.
  EXPECT_EQ(w.Check(w.pod("ignore"), 3), Rule::kTopologySpread);
  EXPECT_EQ(w.Check(w.pod("honor"), 3), std::nullopt);
  EXPECT_EQ(w.Check(w.pod("honor"), 2), Rule::kTopologySpread) << "n2 holds 2, n3 none";
}

TEST(PodTopologyTest, SnapshotTracksVersionAndAntiAffinityPods) {
  World w(Nodes() + Pod("xa", "h", Anti("h", "kubernetes.io/hostname")) + Pod("yb", "h"));
  const uint64_t v0 = w.snap->version();
  {
    Statement st(*w.snap);
    w.Place(st, w.pod("xa"), 0);
    EXPECT_GT(w.snap->version(), v0);
    EXPECT_EQ(w.snap->anti_affinity_pods(), 1);
    EXPECT_EQ(w.snap->AntiAffinityCandidates({{"app", "h"}}).size(), 1u);
    EXPECT_TRUE(w.snap->AntiAffinityCandidates({{"app", "s"}}).empty());
    EXPECT_EQ(w.Check(w.pod("yb"), 0), Rule::kPodAntiAffinity) << "xa's term excludes yb on n0";
    EXPECT_EQ(w.Check(w.pod("yb"), 1), std::nullopt);
  }  // dropped without Commit: xa leaves
  EXPECT_EQ(w.snap->anti_affinity_pods(), 0);
  EXPECT_TRUE(w.snap->AntiAffinityCandidates({{"app", "h"}}).empty());
  EXPECT_EQ(w.Check(w.pod("yb"), 0), std::nullopt);
}

TEST(PodTopologyTest, LabelSelectors) {
  api::LabelSelector s;
  s.match_labels = {{"app", "web"}};
  s.match_expressions = {{"tier", "In", {"a", "b"}}, {"canary", "DoesNotExist", {}}};
  EXPECT_TRUE(MatchesLabels(s, {{"app", "web"}, {"tier", "a"}}));
  EXPECT_FALSE(MatchesLabels(s, {{"app", "web"}, {"tier", "c"}}));
  EXPECT_FALSE(MatchesLabels(s, {{"app", "web"}, {"tier", "a"}, {"canary", "1"}}));
  EXPECT_FALSE(MatchesLabels(s, {{"tier", "a"}}));
  EXPECT_TRUE(MatchesLabels(api::LabelSelector{}, {})) << "the empty selector matches all";
  auto pod = [](const std::string& ns, std::map<std::string, std::string> ns_labels) {
    PodLabels p;
    p.ns = ns;
    p.ns_labels = std::make_shared<const std::map<std::string, std::string>>(std::move(ns_labels));
    return p;
  };
  const PodLabels in_t = pod("t", {}), in_u = pod("u", {{"team", "b"}}),
                  in_v = pod("v", {{"team", "a"}});
  api::PodAffinityTerm t;
  EXPECT_FALSE(TermMatches(t, "t", in_t)) << "no labelSelector matches nothing";
  t.label_selector = api::LabelSelector{};
  EXPECT_TRUE(TermMatches(t, "t", in_t));
  EXPECT_FALSE(TermMatches(t, "t", in_u)) << "the term's own namespace by default";
  t.namespaces = {"u"};
  EXPECT_TRUE(TermMatches(t, "t", in_u));
  EXPECT_FALSE(TermMatches(t, "t", in_t)) << "listed namespaces replace the term's own";
  t.namespaces.clear();
  t.namespace_selector = api::LabelSelector{};
  EXPECT_TRUE(TermMatches(t, "t", in_v)) << "an empty namespaceSelector: every namespace";
  t.namespace_selector->match_labels = {{"team", "a"}};
  EXPECT_TRUE(TermMatches(t, "t", in_v)) << "a namespace the selector matches";
  EXPECT_FALSE(TermMatches(t, "t", in_u));
  EXPECT_FALSE(TermMatches(t, "t", in_t)) << "a selector does not add the term's own namespace";
  t.namespaces = {"u"};
  EXPECT_TRUE(TermMatches(t, "t", in_u)) << "listed namespaces and selected ones both count";
  EXPECT_TRUE(TermMatches(t, "t", in_v));
  PodLabels unlabelled;
  unlabelled.ns = "w";
  EXPECT_FALSE(TermMatches(t, "t", unlabelled)) << "a pod without namespace labels: none match";
}

}  // namespace
}  // namespace gpuplane::sched
