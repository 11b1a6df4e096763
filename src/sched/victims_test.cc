// Victim choice against a brute-force reference on 4,000 random small clusters: every subset
// of the running jobs, with the rules re-stated plainly (who may evict whom, queue floors,
// guarantee windows tried last) and pods placed on nodes by trying every assignment. A single
// pod's choice must cost exactly the optimum; a gang's must exist exactly when some set
// exists, be allowed, make room, need every victim, and be optimal in nearly every case.
// Also the checkpoint arithmetic and annotations.
#include "sched/victims.h"

#include <cstdint>
#include <cstdio>
#include <random>

#include "gtest/gtest.h"
#include "sched/checkpoints.h"

namespace gpuplane::sched {
namespace {

constexpr int kGpusPerNode = 8;

struct Instance {
  std::vector<int> free;
  std::vector<Running> running;
  Preemptor p;
  std::vector<QueueUse> queues;
};

Instance Random(std::mt19937& rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Instance in;
  const int nodes = uniform(2, 4);
  in.free.assign(nodes, kGpusPerNode);
  in.queues.assign(2, QueueUse{});
  const bool queues = uniform(0, 3) > 0;
  for (int tries = uniform(1, 10); tries > 0; --tries) {
    Running r;
    r.queue = queues ? uniform(0, 1) : -1;
    r.priority = uniform(0, 2);
    r.lost_gpu_seconds = uniform(1, 100);
    r.min_runtime = uniform(0, 9) == 0;
    r.in_window = uniform(0, 4) == 0;
    const bool gang = uniform(0, 3) == 0;
    const int size = gang ? 4 * uniform(1, 2) : uniform(1, kGpusPerNode);
    for (int member = 0; member < (gang ? 2 : 1); ++member) {
      const int n = uniform(0, nodes - 1);
      if (in.free[n] < size) continue;
      in.free[n] -= size;
      r.placement.emplace_back(n, size);
    }
    if (r.placement.size() != (gang ? 2u : 1u)) {  // undo a gang that did not fit whole
      for (const auto& [n, g] : r.placement) in.free[n] += g;
      continue;
    }
    if (r.queue >= 0) in.queues[r.queue].allocated += r.Gpus();
    in.running.push_back(r);
  }
  for (QueueUse& q : in.queues) q.fair = uniform(0, static_cast<int>(q.allocated) + 8);
  in.p.queue = queues ? uniform(0, 1) : -1;
  in.p.priority = uniform(0, 3);
  if (uniform(0, 2) == 0) {
    in.p.pods.assign(uniform(2, 3), 4 * uniform(1, 2));
  } else {
    in.p.pods = {uniform(1, kGpusPerNode)};
  }
  return in;
}

// ---- the reference, written without the code under test

bool PlainFits(const std::vector<int>& pods, std::vector<int> free, size_t i = 0) {
  if (i == pods.size()) return true;
  for (int& f : free) {
    if (f < pods[i]) continue;
    f -= pods[i];
    const bool ok = PlainFits(pods, free, i + 1);
    f += pods[i];
    if (ok) return true;
  }
  return false;
}

bool PlainAllowed(const Instance& in, const Running& r, bool window) {
  if (r.min_runtime || (r.in_window && !window)) return false;
  if (in.p.queue < 0 || r.queue < 0 || in.p.queue == r.queue) return r.priority < in.p.priority;
  return in.queues[in.p.queue].allocated + in.p.Gpus() <= in.queues[in.p.queue].fair;
}

struct Best {
  bool found = false;
  double lost = 0;
  bool window = false;
};

Best Reference(const Instance& in) {
  for (bool window : {false, true}) {
    Best best;
    const size_t n = in.running.size();
    for (uint32_t mask = 0; mask < (1u << n); ++mask) {
      std::vector<int> free = in.free;
      std::vector<double> lost_by_queue(2, 0);
      double lost = 0;
      bool ok = true;
      for (size_t j = 0; j < n && ok; ++j) {
        if (!((mask >> j) & 1u)) continue;
        const Running& r = in.running[j];
        ok = PlainAllowed(in, r, window);
        for (const auto& [node, g] : r.placement) free[node] += g;
        if (r.queue >= 0 && in.p.queue >= 0 && r.queue != in.p.queue) {
          lost_by_queue[r.queue] += r.Gpus();
        }
        lost += r.lost_gpu_seconds;
      }
      for (int q = 0; q < 2 && ok; ++q) {
        ok =
            in.queues[q].allocated - lost_by_queue[q] >= in.queues[q].fair || lost_by_queue[q] == 0;
      }
      if (!ok || !PlainFits(in.p.pods, free)) continue;
      if (!best.found || lost < best.lost) best = {true, lost, window};
    }
    if (best.found) return best;
  }
  return {};
}

TEST(Victims, MatchBruteForce) {
  std::mt19937 rng(11);
  int gangs = 0, gangs_optimal = 0, with_victims = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Instance in = Random(rng);
    Best ref = Reference(in);
    std::optional<Victims> got = ChooseVictims(in.free, in.running, in.p, in.queues);
    ASSERT_EQ(got.has_value(), ref.found) << "trial " << trial;
    if (!got) continue;
    with_victims += got->jobs.empty() ? 0 : 1;
    std::vector<int> free = in.free;
    std::vector<double> lost_by_queue(2, 0);
    for (size_t j : got->jobs) {
      const Running& r = in.running[j];
      EXPECT_TRUE(PlainAllowed(in, r, got->from_window)) << "trial " << trial << " job " << j;
      for (const auto& [node, g] : r.placement) free[node] += g;
      if (r.queue >= 0 && in.p.queue >= 0 && r.queue != in.p.queue) {
        lost_by_queue[r.queue] += r.Gpus();
      }
    }
    for (int q = 0; q < 2; ++q) {
      EXPECT_TRUE(lost_by_queue[q] == 0 ||
                  in.queues[q].allocated - lost_by_queue[q] >= in.queues[q].fair)
          << "trial " << trial;
    }
    EXPECT_TRUE(PlainFits(in.p.pods, free)) << "trial " << trial;
    EXPECT_EQ(got->from_window, ref.window) << "trial " << trial;
    for (size_t drop = 0; drop < got->jobs.size(); ++drop) {
      std::vector<int> less = free;
      for (const auto& [node, g] : in.running[got->jobs[drop]].placement) less[node] -= g;
      EXPECT_FALSE(PlainFits(in.p.pods, less)) << "trial " << trial << ": victim not needed";
    }
    if (in.p.pods.size() == 1) {
      EXPECT_DOUBLE_EQ(got->lost_gpu_seconds, ref.lost) << "trial " << trial;
    } else {
      EXPECT_GE(got->lost_gpu_seconds, ref.lost) << "trial " << trial;
      ++gangs;
      gangs_optimal += got->lost_gpu_seconds == ref.lost ? 1 : 0;
    }
  }
  // The instances must exercise the search, and gangs' choices be optimal nearly always.
  EXPECT_GT(with_victims, 500);
  EXPECT_GT(gangs, 300);
  EXPECT_GE(gangs_optimal, gangs * 95 / 100) << gangs_optimal << " of " << gangs;
  std::printf("%d of %d gang choices optimal; %d choices with victims\n", gangs_optimal, gangs,
              with_victims);
}

TEST(Victims, WholeGangsAndCheapestFirst) {
  // Node 0: a 4-GPU job that just checkpointed (lost 40) and a 4-GPU member of a gang whose
  // other member is on node 1 (lost 400 for the whole gang). An 8-GPU pod must go somewhere.
  std::vector<Running> running = {
      {.placement = {{0, 4}}, .priority = 0, .lost_gpu_seconds = 40},
      {.placement = {{0, 4}, {1, 4}}, .priority = 0, .lost_gpu_seconds = 400},
      {.placement = {{1, 4}}, .priority = 0, .lost_gpu_seconds = 10}};
  Preemptor p{.pods = {8}, .priority = 1};
  std::optional<Victims> v = ChooseVictims({0, 0}, running, p, {});
  ASSERT_TRUE(v);
  // Node 1 costs 400 + 10 (the whole gang goes), node 0 costs 40 + 400: node 1 is cheaper.
  EXPECT_EQ(v->jobs, (std::vector<size_t>{1, 2}));
  EXPECT_DOUBLE_EQ(v->lost_gpu_seconds, 410);
  // Higher-priority work is never a victim of lower-priority work.
  p.priority = 0;
  EXPECT_FALSE(ChooseVictims({0, 0}, running, p, {}));
}

TEST(Victims, ReclaimKeepsTheVictimQueueAtItsFairShare) {
  // Queue 0 holds 16 GPUs with a fair share of 8; queue 1 holds none, fair 8.
  std::vector<Running> running = {{.placement = {{0, 8}}, .queue = 0, .lost_gpu_seconds = 5},
                                  {.placement = {{1, 8}}, .queue = 0, .lost_gpu_seconds = 9}};
  std::vector<QueueUse> queues = {{16, 8}, {0, 8}};
  Preemptor p{.pods = {8}, .queue = 1, .priority = 0};
  std::optional<Victims> v = ChooseVictims({0, 0}, running, p, queues);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->jobs, (std::vector<size_t>{0}));
  // Two pods would take queue 0 below its share, and queue 1 above its own: no reclaim.
  p.pods = {8, 8};
  EXPECT_FALSE(ChooseVictims({0, 0}, running, p, queues));
}

TEST(Victims, NonPreemptibleWorkMayTakeFromAnyQueueWhenAllowedAcrossQueues) {
  // Queue 1 is at its fair share: its preemptible job is not reclaimable, but a
  // non-preemptible job allowed across queues evicts it.
  std::vector<Running> running = {
      {.placement = {{0, 8}}, .queue = 1, .priority = 0, .lost_gpu_seconds = 5}};
  std::vector<QueueUse> queues = {{0, 8}, {8, 8}};
  Preemptor p{.pods = {8}, .queue = 0, .priority = 1};
  EXPECT_FALSE(ChooseVictims({0}, running, p, queues));
  p.priority_across_queues = true;
  std::optional<Victims> v = ChooseVictims({0}, running, p, queues);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->jobs, (std::vector<size_t>{0}));
}

TEST(Checkpoints, LostWorkSinceTheLastCheckpointPlusRestore) {
  Checkpointing c{.interval_seconds = 1800, .restore_seconds = 60};
  // Started at 0, now 4000: checkpoints at 1800 and 3600; 400 s lost plus 60 s restore.
  EXPECT_DOUBLE_EQ(LastCheckpoint(4000, 0, c), 3600);
  EXPECT_DOUBLE_EQ(LostGpuSeconds(8, 4000, 0, c), 8 * 460);
  c.last_checkpoint = 3900;  // a recorded checkpoint wins
  EXPECT_DOUBLE_EQ(LostGpuSeconds(8, 4000, 0, c), 8 * 160);
  EXPECT_DOUBLE_EQ(LostGpuSeconds(2, 500, 100, Checkpointing{}), 800);  // nothing saved
}

TEST(Checkpoints, AnnotationsAndTheirErrors) {
  api::ObjectMeta m;
  m.name = "w-0";
  m.namespace_name = "nlp";
  m.annotations = {{"gpuplane.io/checkpoint-interval", "1h30m"},
                   {"gpuplane.io/last-checkpoint", "2026-12-01T10:00:00Z"},
                   {"gpuplane.io/restore-seconds", "45"}};
  absl::StatusOr<Checkpointing> c = CheckpointingOf(m);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->interval_seconds, 5400);
  EXPECT_DOUBLE_EQ(c->last_checkpoint, 1796119200);  // date -u -d 2026-12-01T10:00:00Z +%s
  EXPECT_DOUBLE_EQ(c->restore_seconds, 45);
  m.annotations["gpuplane.io/checkpoint-interval"] = "30 minutes";
  EXPECT_EQ(CheckpointingOf(m).status().message(),
            "nlp/w-0: annotation gpuplane.io/checkpoint-interval: \"30 minutes\" is not a "
            "positive duration such as 30m or 1h30m");
  m.annotations["gpuplane.io/checkpoint-interval"] = "30m";
  m.annotations["gpuplane.io/last-checkpoint"] = "yesterday";
  EXPECT_EQ(CheckpointingOf(m).status().message(),
            "nlp/w-0: annotation gpuplane.io/last-checkpoint: \"yesterday\" is not an RFC 3339 "
            "time such as 2026-12-01T10:00:00Z");
  m.annotations["gpuplane.io/last-checkpoint"] = "2026-12-01T10:00:00Z";
  m.annotations["gpuplane.io/restore-seconds"] = "-1";
  EXPECT_EQ(CheckpointingOf(m).status().message(),
            "nlp/w-0: annotation gpuplane.io/restore-seconds: \"-1\" is not a non-negative "
            "number of seconds");
  m.annotations["gpuplane.io/restore-seconds"] = "45";
  EXPECT_DOUBLE_EQ(CheckpointingOf(m)->signal_save_seconds, -1);  // absent: it does not
  m.annotations["gpuplane.io/checkpoint-on-signal"] = "1m30s";
  EXPECT_DOUBLE_EQ(CheckpointingOf(m)->signal_save_seconds, 90);
  m.annotations["gpuplane.io/checkpoint-on-signal"] = "true";
  EXPECT_EQ(CheckpointingOf(m).status().message(),
            "nlp/w-0: annotation gpuplane.io/checkpoint-on-signal: \"true\" is not a duration "
            "such as 30s or 2m (how long the job needs to save on the termination signal)");
}

TEST(Checkpoints, AJobThatSavesOnTheSignalWithinItsGraceLosesOnlyTheRestore) {
  Checkpointing c{.interval_seconds = 1800, .restore_seconds = 60};
  // It does not save on the signal: 400 s since the checkpoint at 3600, plus the restore.
  EXPECT_DOUBLE_EQ(LostGpuSecondsSignalled(8, 4000, 0, c, 30), 8 * 460);
  c.signal_save_seconds = 20;
  EXPECT_TRUE(SavesOnSignal(c, 30));
  EXPECT_DOUBLE_EQ(LostGpuSecondsSignalled(8, 4000, 0, c, 30), 8 * 60);
  // Killed before it has saved: as if it did not save on the signal.
  EXPECT_FALSE(SavesOnSignal(c, 10));
  EXPECT_DOUBLE_EQ(LostGpuSecondsSignalled(8, 4000, 0, c, 10), 8 * 460);
  c.signal_save_seconds = 0;
  EXPECT_TRUE(SavesOnSignal(c, 0));
  EXPECT_FALSE(SavesOnSignal(Checkpointing{}, 1e9));
}

}  // namespace
}  // namespace gpuplane::sched
