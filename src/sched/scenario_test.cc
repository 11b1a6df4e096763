// Data-driven scheduling scenarios: every testdata/sched/*.yaml is a cluster plus work, with
// expectations in header comments:
//   # cluster: examples/cluster     (optional: also load these objects; repeatable)
//   # policy: first-fit             (optional; default gpuplane)
//   # prices: FILE                  (optional: dollars per GPU-hour by product name)
//   # expect: NS/POD Scheduled [node=N] [devices=D1,D2] [nodes-of=NS/POD] [volumes=V1,-]
//     (volumes: what each unbound WaitForFirstConsumer claim gets; "-": provisioned)
//   # expect: NS/POD Unschedulable|Unresolvable|Error [REASON FRAGMENT]
//   # expect-hint: NS/POD FRAGMENT   (what `gpuplane explain` says would unblock it)
//   # expect-stage: NS/POD STAGE
//   # expect-warning: FRAGMENT       (a warning of the pass: file:line problems)
//   # expect-gangs: N SCHEDULED
//   # preempt: 2026-12-01T12:00:00Z  (optional: preemption on, lost work counted to this time)
//   # expect-preempt: NS/POD node=N victims=NS/A,NS/B [lost=GPU-SECONDS]  (or: NS/POD none)
//   # usage: K QUEUE=DEVICE-SECONDS...  (optional: fair shares lean against this past use)
// Pods, unallocated ResourceClaims, ResourceClaimTemplates, PodGroups and Workloads are the
// work; everything else (allocated claims counting as in use) is the cluster. Every
// allocation the pass makes is checked by the independent verifier (an Error status if not).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/loader.h"
#include "gtest/gtest.h"
#include "sched/checkpoints.h"
#include "sched/pass.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

bool IsWork(const api::Object& o) {
  if (const auto* c = std::get_if<api::ResourceClaim>(&o)) return !c->status.allocation;
  return std::holds_alternative<api::ResourceClaimTemplate>(o) ||
         std::holds_alternative<api::Pod>(o) || std::holds_alternative<api::PodGroup>(o) ||
         std::holds_alternative<api::Workload>(o);
}

struct Header {
  std::vector<std::string> expects, hints, stages, warnings, clusters, preempts;
  std::string policy = "gpuplane", prices, gangs, now, usage;
};

Header ReadHeader(const std::filesystem::path& path) {
  Header h;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && line.rfind('#', 0) == 0) {
    auto take = [&](const std::string& key, std::vector<std::string>& into) {
      if (line.rfind(key, 0) == 0) into.push_back(line.substr(key.size()));
    };
    take("# expect: ", h.expects);
    take("# expect-hint: ", h.hints);
    take("# expect-stage: ", h.stages);
    take("# expect-warning: ", h.warnings);
    take("# cluster: ", h.clusters);
    take("# expect-preempt: ", h.preempts);
    if (line.rfind("# preempt: ", 0) == 0) h.now = line.substr(11);
    if (line.rfind("# usage: ", 0) == 0) h.usage = line.substr(9);
    if (line.rfind("# policy: ", 0) == 0) h.policy = line.substr(10);
    if (line.rfind("# prices: ", 0) == 0) h.prices = line.substr(10);
    if (line.rfind("# expect-gangs: ", 0) == 0) h.gangs = line.substr(16);
  }
  return h;
}

std::map<std::string, double> ReadPrices(const std::string& file) {
  std::map<std::string, double> out;
  std::ifstream in(std::string(GPUPLANE_SOURCE_DIR) + "/" + file);
  std::string line;
  while (std::getline(in, line)) {  // "NAME": PRICE lines (the test prices files are this simple)
    size_t colon = line.rfind(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
    out[name] = std::stod(line.substr(colon + 1));
  }
  return out;
}

size_t FindPod(const PassResult& r, const std::string& key) {
  for (size_t i = 0; i < r.pods.pods.size(); ++i) {
    if (r.pods.pods[i].key == key) return i;
  }
  ADD_FAILURE() << "no pod " << key;
  return SIZE_MAX;
}

void CheckScheduled(const PassResult& r, size_t i, const std::vector<std::string>& words,
                    const std::string& e) {
  const Decision& d = r.decisions[i];
  ASSERT_TRUE(d.status.ok()) << e << "\n" << Render(d.status);
  const model::Inventory& inv = r.snapshot->inventory();
  std::vector<std::string> devices;
  for (const auto& [key, result] : d.claims) {
    for (const api::DeviceRequestAllocationResult& x : result.devices.results) {
      devices.push_back(x.device);
    }
  }
  for (size_t w = 2; w < words.size(); ++w) {
    std::string key = words[w].substr(0, words[w].find('='));
    std::string want = words[w].substr(words[w].find('=') + 1);
    if (key == "node") {
      EXPECT_EQ(inv.nodes()[d.node].name, want) << e;
    } else if (key == "devices") {
      EXPECT_EQ(devices, util::SplitNonEmpty(want, ',')) << e;
    } else if (key == "volumes") {
      std::vector<std::string> got;
      for (const VolumeChoice& v : d.volumes) got.push_back(v.volume.empty() ? "-" : v.volume);
      EXPECT_EQ(got, util::SplitNonEmpty(want, ',')) << e;
    } else if (key == "nodes-of") {  // on the same node as another pod
      size_t other = FindPod(r, want);
      ASSERT_NE(other, SIZE_MAX);
      EXPECT_EQ(d.node, r.decisions[other].node) << e;
    } else {
      ADD_FAILURE() << "unknown expectation key " << key;
    }
  }
}

void CheckExpectation(const PassResult& r, const std::string& e) {
  std::vector<std::string> words = util::SplitNonEmpty(e, ' ');
  ASSERT_GE(words.size(), 2u) << e;
  size_t i = FindPod(r, words[0]);
  ASSERT_NE(i, SIZE_MAX);
  const Decision& d = r.decisions[i];
  if (words[1] == "Scheduled") return CheckScheduled(r, i, words, e);
  EXPECT_EQ(std::string(CodeName(d.status.code)), words[1]) << e << "\n" << Render(d.status);
  size_t at = e.find(words[1]) + words[1].size();
  std::string fragment = at < e.size() ? e.substr(at + 1) : "";
  EXPECT_NE(Render(d.status).find(fragment), std::string::npos)
      << e << "\nreason: " << Render(d.status);
}

void CheckPreemption(const PassResult& r, const std::string& e) {
  std::vector<std::string> words = util::SplitNonEmpty(e, ' ');
  ASSERT_GE(words.size(), 2u) << e;
  size_t i = FindPod(r, words[0]);
  ASSERT_NE(i, SIZE_MAX);
  const Decision& d = r.decisions[i];
  if (words[1] == "none") {
    EXPECT_TRUE(d.victims.empty() && d.nominated == model::kNoId) << e;
    return;
  }
  ASSERT_NE(d.nominated, model::kNoId) << e << "\n" << Render(d.status);
  std::vector<std::string> victims;
  for (size_t v : d.victims) victims.push_back(r.pods.pods[v].key);
  for (size_t w = 1; w < words.size(); ++w) {
    std::string key = words[w].substr(0, words[w].find('='));
    std::string want = words[w].substr(words[w].find('=') + 1);
    if (key == "node") {
      EXPECT_EQ(r.snapshot->inventory().nodes()[d.nominated].name, want) << e;
    } else if (key == "victims") {
      EXPECT_EQ(victims, util::SplitNonEmpty(want, ',')) << e;
    } else if (key == "lost") {
      EXPECT_NEAR(d.lost_gpu_seconds, std::stod(want), 0.5) << e;
    } else {
      ADD_FAILURE() << "unknown expectation key " << key;
    }
  }
}

void RunScenario(const std::filesystem::path& path) {
  Header h = ReadHeader(path);
  ASSERT_FALSE(h.expects.empty() && h.warnings.empty() && h.preempts.empty()) << "no expectations";
  api::Loader loader;
  for (const std::string& c : h.clusters) {
    ASSERT_TRUE(loader.AddPath(std::string(GPUPLANE_SOURCE_DIR) + "/" + c).ok()) << c;
  }
  ASSERT_TRUE(loader.AddPath(path.string()).ok());
  api::LoadResult lr = loader.Finish();
  for (const api::Diagnostic& d : lr.diagnostics) {
    if (d.is_error()) ADD_FAILURE() << d.ToString();
  }
  std::vector<api::SourcedObject> cluster, work;
  for (api::SourcedObject& o : lr.objects) (IsWork(o.object) ? work : cluster).push_back(o);
  std::map<std::string, double> prices;
  if (!h.prices.empty()) prices = ReadPrices(h.prices);
  SessionOptions options{.policy = h.policy, .verify = true};
  if (!h.now.empty()) {
    std::optional<double> now = UnixSeconds(h.now);
    ASSERT_TRUE(now) << "# preempt: " << h.now;
    options.preemption = {.enabled = true, .now = *now};
  }
  if (!h.usage.empty()) {
    std::istringstream words(h.usage);
    words >> options.usage_k;
    for (std::string w; words >> w;) {
      size_t eq = w.find('=');
      ASSERT_NE(eq, std::string::npos) << "# usage: " << h.usage;
      options.queue_usage[w.substr(0, eq)] = std::stod(w.substr(eq + 1));
    }
  }
  absl::StatusOr<PassResult> r = RunPass(cluster, work, options, prices);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const std::string& e : h.expects) CheckExpectation(*r, e);
  for (const std::string& e : h.preempts) CheckPreemption(*r, e);
  for (const std::string& e : h.hints) {
    std::string pod = e.substr(0, e.find(' '));
    size_t i = FindPod(*r, pod);
    ASSERT_NE(i, SIZE_MAX);
    std::string hint = Hint(r->decisions[i].status);
    EXPECT_NE(hint.find(e.substr(pod.size() + 1)), std::string::npos) << e << "\nhint: " << hint;
  }
  for (const std::string& e : h.stages) {
    std::string pod = e.substr(0, e.find(' '));
    size_t i = FindPod(*r, pod);
    ASSERT_NE(i, SIZE_MAX);
    EXPECT_EQ(std::string(StageName(r->decisions[i].status.stage)), e.substr(pod.size() + 1)) << e;
  }
  for (const std::string& e : h.warnings) {
    bool found = false;
    for (const std::string& w : r->warnings) found = found || w.find(e) != std::string::npos;
    EXPECT_TRUE(found) << "no warning with: " << e;
  }
  if (!h.gangs.empty()) {
    int gangs = 0, scheduled = 0;
    for (const Gang& g : r->pods.gangs) {
      if (g.kind == "Pod") continue;
      ++gangs;
      bool all = true;
      for (size_t m : g.members) all = all && r->decisions[m].status.ok();
      scheduled += all ? 1 : 0;
    }
    EXPECT_EQ(std::to_string(gangs) + " " + std::to_string(scheduled), h.gangs);
  }
}

TEST(ScheduleScenarioTest, EveryScenarioMeetsItsExpectations) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUPLANE_SOURCE_DIR) + "/testdata/sched")) {
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::filesystem::path& p : paths) {
    SCOPED_TRACE(p.filename().string());
    RunScenario(p);
  }
  std::printf("  %zu scheduling scenarios\n", paths.size());
  EXPECT_GE(paths.size(), 40u);  // issue 12: at least 40 scenarios
}

}  // namespace
}  // namespace gpuplane::sched
