// Preemption property test: on 3,000 random small clusters (1-3 nodes of 1-4 identical GPUs,
// running pods of 1-2 GPUs with random priorities, restore times, start times and grace
// periods, some of them gangs across two nodes, some terminating) and a pending pod of 1-4 GPUs,
// the Session's preemption agrees with a brute force over every subset of the running jobs,
// counting GPUs: it preempts exactly when some set of lower-priority jobs (whole, not terminating)
// makes room on one node, its victims lose exactly the least work any such set loses, they are
// whole jobs of lower priority, and they free enough GPUs on the nominated node.
#include <map>
#include <random>
#include <set>

#include "absl/time/time.h"
#include "api/loader.h"
#include "api/testing.h"
#include "gtest/gtest.h"
#include "sched/pass.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

constexpr double kNow = 1'780'000'000;  // seconds since 1970 (2026-05-28)

struct RunningPod {
  std::string name;
  int node = 0;
  std::vector<int> gpus;
};

struct RunningJob {
  std::vector<RunningPod> pods;
  int priority = 0;
  double restore = 0;
  double started = 0;
  int grace = -1;  // terminationGracePeriodSeconds; -1: not set (the API server's 30)
  bool terminating = false;
  int Gpus() const {
    int n = 0;
    for (const RunningPod& p : pods) n += static_cast<int>(p.gpus.size());
    return n;
  }
  // The victim runs on through its grace period, and what it does then is lost too.
  double Lost() const { return Gpus() * ((kNow + (grace < 0 ? 30 : grace) - started) + restore); }
};

struct PreemptInstance {
  std::vector<int> gpus;  // per node
  std::vector<RunningJob> jobs;
  int priority = 0;  // of the pending pod
  int want = 1;      // its GPUs
  // The last node was deleted (scaled down): its Node and ResourceSlice are gone, the pods
  // bound to it and their claims are still there.
  bool last_deleted = false;
};

std::string Time(double t) {
  return absl::FormatTime(absl::RFC3339_sec, absl::FromUnixSeconds(static_cast<int64_t>(t)),
                          absl::UTCTimeZone());
}

PreemptInstance RandomPreemptInstance(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  PreemptInstance in;
  in.gpus.resize(pick(1, 3));
  std::vector<std::vector<int>> free(in.gpus.size());
  for (size_t n = 0; n < in.gpus.size(); ++n) {
    in.gpus[n] = pick(1, 4);
    for (int g = 0; g < in.gpus[n]; ++g) free[n].push_back(g);
  }
  auto take = [&](int n, int count) {
    RunningPod p;
    p.node = n;
    for (int i = 0; i < count; ++i) {
      p.gpus.push_back(free[n].back());
      free[n].pop_back();
    }
    return p;
  };
  for (int tries = 0; tries < 12; ++tries) {
    int n = pick(0, static_cast<int>(in.gpus.size()) - 1);
    int count = pick(1, 2);
    if (static_cast<int>(free[n].size()) < count || pick(0, 9) == 0) continue;
    RunningJob job;
    job.pods.push_back(take(n, count));
    int other = pick(0, static_cast<int>(in.gpus.size()) - 1);
    if (other != n && !free[other].empty() && pick(0, 3) == 0) job.pods.push_back(take(other, 1));
    job.priority = std::vector<int>{1, 5, 10}[pick(0, 2)];
    job.restore = pick(0, 20) * 50;
    job.started = kNow - pick(1, 7200);
    job.grace = pick(0, 2) == 0 ? -1 : pick(0, 600);
    job.terminating = pick(0, 9) == 0;
    in.jobs.push_back(std::move(job));
  }
  in.priority = std::vector<int>{5, 10, 20}[pick(0, 2)];
  in.want = pick(1, 4);
  in.last_deleted = in.gpus.size() > 1 && pick(0, 4) == 0;
  return in;
}

std::string Yaml(const PreemptInstance& in) {
  std::string out =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n"
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
      "metadata: {name: want, namespace: t}\nspec: {spec: {devices: {requests: [{name: gpu, "
      "exactly: {deviceClassName: gpu, count: " +
      std::to_string(in.want) + "}}]}}}\n";
  for (size_t n = 0; n < in.gpus.size(); ++n) {
    if (in.last_deleted && n + 1 == in.gpus.size()) break;
    out += util::Cat("---\napiVersion: v1\nkind: Node\nmetadata: {name: n", n,
                     "}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                     "metadata: {name: n",
                     n, "}\nspec:\n  driver: gpu.example.com\n  pool: {name: n", n,
                     ", generation: 1, resourceSliceCount: 1}\n  nodeName: n", n, "\n  devices:\n");
    for (int g = 0; g < in.gpus[n]; ++g) out += util::Cat("  - {name: gpu-", g, "}\n");
  }
  for (size_t j = 0; j < in.jobs.size(); ++j) {
    const RunningJob& job = in.jobs[j];
    for (size_t i = 0; i < job.pods.size(); ++i) {
      const RunningPod& p = job.pods[i];
      std::string name = util::Cat("j", j, "-", i);
      std::string results;
      for (int g : p.gpus) {
        results += util::Cat(results.empty() ? "" : ", ",
                             "{request: gpu, driver: gpu.example.com, pool: n", p.node,
                             ", device: gpu-", g, "}");
      }
      out += util::Cat(
          "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ", name,
          ", namespace: t}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: "
          "gpu, count: ",
          p.gpus.size(), "}}]}}\nstatus:\n  allocation:\n    devices:\n      results: [", results,
          "]\n    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, "
          "operator: In, values: [n",
          p.node, "]}]}]}\n  reservedFor: [{resource: pods, name: ", name, ", uid: u-", name,
          "}]\n");
      std::string labels = job.pods.size() > 1
                               ? util::Cat(", labels: {scheduling.x-k8s.io/pod-group: g", j, "}")
                               : "";
      std::string deleting =
          job.terminating ? util::Cat(", deletionTimestamp: \"", Time(kNow - 1), "\"") : "";
      out += util::Cat(
          "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name, ", namespace: t, uid: u-",
          name, ", annotations: {gpuplane.io/restore-seconds: \"", job.restore, "\"}", labels,
          deleting, "}\nspec:\n  nodeName: n", p.node, "\n  priority: ", job.priority,
          job.grace < 0 ? "" : util::Cat("\n  terminationGracePeriodSeconds: ", job.grace),
          "\n  resourceClaims: [{name: gpu, resourceClaimName: ", name,
          "}]\n  containers: [{name: c}]\nstatus: {startTime: \"", Time(job.started), "\"}\n");
    }
  }
  out += util::Cat(
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: t}\nspec:\n  priority: ",
      in.priority,
      "\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: want}]\n"
      "  containers: [{name: c}]\n");
  return out;
}

// The least lost work of a set of allowed jobs that makes room on one node, or -1.
double BruteForce(const PreemptInstance& in) {
  std::vector<size_t> allowed;
  for (size_t j = 0; j < in.jobs.size(); ++j) {
    if (in.jobs[j].priority < in.priority && !in.jobs[j].terminating) allowed.push_back(j);
  }
  double best = -1;
  for (uint32_t mask = 0; mask < (1u << allowed.size()); ++mask) {
    std::vector<int> free = in.gpus;
    double lost = 0;
    for (const RunningJob& job : in.jobs) {
      for (const RunningPod& p : job.pods) free[p.node] -= static_cast<int>(p.gpus.size());
    }
    for (size_t b = 0; b < allowed.size(); ++b) {
      if (((mask >> b) & 1u) == 0) continue;
      const RunningJob& job = in.jobs[allowed[b]];
      lost += job.Lost();
      for (const RunningPod& p : job.pods) free[p.node] += static_cast<int>(p.gpus.size());
    }
    bool fits = false;
    for (size_t n = 0; n < free.size(); ++n) {
      bool gone = in.last_deleted && n + 1 == free.size();
      fits = fits || (!gone && free[n] >= in.want);
    }
    if (fits && (best < 0 || lost < best)) best = lost;
  }
  return best;
}

TEST(PreemptPropertyTest, MatchesBruteForceOverEverySetOfJobs) {
  std::mt19937 rng(20261203);
  int preempted = 0, waited = 0, fit = 0;
  for (int round = 0; round < 3000; ++round) {
    PreemptInstance in = RandomPreemptInstance(rng);
    std::string yaml = Yaml(in);
    api::LoadResult lr = api::testing::LoadText(yaml);
    ASSERT_EQ(lr.errors(), 0u) << api::testing::Diagnostics(lr) << yaml;
    std::vector<api::SourcedObject> cluster, work;
    for (api::SourcedObject& o : lr.objects) {
      bool is_work = std::holds_alternative<api::Pod>(o.object) ||
                     std::holds_alternative<api::ResourceClaimTemplate>(o.object);
      (is_work ? work : cluster).push_back(std::move(o));
    }
    SessionOptions options{.verify = true};
    options.preemption = {.enabled = true, .now = kNow};
    absl::StatusOr<PassResult> r = RunPass(cluster, work, options);
    ASSERT_TRUE(r.ok()) << r.status();
    const Decision& d = r->decisions.back();
    ASSERT_EQ(r->pods.pods.back().key, "t/new");
    if (d.status.ok()) {
      ++fit;
      EXPECT_TRUE(d.victims.empty());
      continue;
    }
    double best = BruteForce(in);
    SCOPED_TRACE(yaml);
    if (best < 0) {
      EXPECT_EQ(d.nominated, model::kNoId) << "round " << round;
      ++waited;
      continue;
    }
    ASSERT_NE(d.nominated, model::kNoId) << "round " << round << ": brute force frees room";
    ASSERT_LT(d.nominated + (in.last_deleted ? 1 : 0), in.gpus.size()) << "round " << round;
    ++preempted;
    EXPECT_NEAR(d.lost_gpu_seconds, best, 1e-6) << "round " << round;
    // Whole jobs of lower priority, making room on the nominated node.
    std::set<std::string> victims;
    for (size_t v : d.victims) victims.insert(r->pods.pods[v].key);
    int free = in.gpus[d.nominated];
    for (size_t j = 0; j < in.jobs.size(); ++j) {
      const RunningJob& job = in.jobs[j];
      int hit = 0;
      for (size_t i = 0; i < job.pods.size(); ++i) {
        bool out = victims.contains(util::Cat("t/j", j, "-", i));
        hit += out ? 1 : 0;
        if (job.pods[i].node == static_cast<int>(d.nominated) && !out) {
          free -= static_cast<int>(job.pods[i].gpus.size());
        }
      }
      EXPECT_TRUE(hit == 0 || hit == static_cast<int>(job.pods.size())) << "job " << j;
      if (hit > 0) {
        EXPECT_LT(job.priority, in.priority) << "job " << j;
        EXPECT_FALSE(job.terminating) << "job " << j;
      }
    }
    EXPECT_GE(free, in.want) << "round " << round;
  }
  std::printf("%d preempted, %d with no set, %d fit without\n", preempted, waited, fit);
  EXPECT_GT(preempted, 300);
  EXPECT_GT(waited, 100);
}

}  // namespace
}  // namespace gpuplane::sched
