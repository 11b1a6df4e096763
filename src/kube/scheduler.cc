#include "kube/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>
#include <utility>
#include <variant>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/storage_types.h"
#include "api/writer.h"
#include "kube/disruption_budget.h"
#include "kube/internal/scheduler_job.h"
#include "kube/json_field.h"
#include "sched/checkpoints.h"
#include "sched/fair_share.h"
#include "sched/pass.h"
#include "sched/queues.h"
#include "sched/status.h"
#include "util/clock.h"
#include "util/strings.h"

namespace gpuplane::kube {

namespace internal {

void Log(const std::string& msg) { std::fprintf(stderr, "gpuplane scheduler: %s\n", msg.c_str()); }

std::string KeyPart(const std::string& key, size_t part) {
  std::vector<std::string> parts = absl::StrSplit(key, '/');
  return part < parts.size() ? parts[part] : "";
}

}  // namespace internal

using internal::KeyPart;
using internal::Log;
using nlohmann::json;

namespace {

// Where a pod stands for this scheduler's passes.
enum class PodState {
  kPending,          // this scheduler's to place: in the pass
  kBound,            // bound and not finished: in the pass (it holds capacity)
  kFinished,         // Succeeded or Failed
  kOtherScheduler,   // spec.schedulerName names another scheduler
  kDeleting,         // metadata.deletionTimestamp is set
  kGated,            // spec.schedulingGates holds it
  kWaitingForClaim,  // a claim from a template the resourceclaim controller has not made yet
};

// `claim`, when given, gets the claim a kWaitingForClaim pod waits for: its name in
// spec.resourceClaims and its template, as "\"gpu\" (template t)".
PodState StateOf(const json& pod, const std::string& name, const ClusterCache& cache,
                 std::string* claim) {
  const json& spec = Field(pod, "spec");
  const json& status = Field(pod, "status");
  std::string_view phase = Str(status, "phase");
  if (phase == "Succeeded" || phase == "Failed") return PodState::kFinished;
  if (!Str(spec, "nodeName").empty()) return PodState::kBound;
  std::string_view scheduler = Str(spec, "schedulerName");
  if ((scheduler.empty() ? "default-scheduler" : scheduler) != name) {
    return PodState::kOtherScheduler;
  }
  if (Field(pod, "metadata").contains("deletionTimestamp")) return PodState::kDeleting;
  if (spec.contains("schedulingGates") && !spec["schedulingGates"].empty()) {
    return PodState::kGated;
  }
  for (const json& rc : Field(spec, "resourceClaims")) {
    if (!rc.contains("resourceClaimTemplateName")) continue;
    bool made = false;
    for (const json& st : Field(status, "resourceClaimStatuses")) {
      if (made || Str(st, "name") != Str(rc, "name")) continue;
      std::string_view made_claim = Str(st, "resourceClaimName");
      if (made_claim.empty()) continue;
      std::string key = util::Cat(Str(Field(pod, "metadata"), "namespace"), "/", made_claim);
      made = cache.Has("ResourceClaim", key);
    }
    if (!made) {
      if (claim != nullptr) {
        *claim = util::Cat("\"", Str(rc, "name"), "\" (template ",
                           Str(rc, "resourceClaimTemplateName"), ")");
      }
      return PodState::kWaitingForClaim;
    }
  }
  return PodState::kPending;
}

// Why a pod that is not pending in a pass is not (for Explain).
std::string Outside(PodState state, const json& pod, const std::string& claim,
                    const std::string& name) {
  const json& spec = Field(pod, "spec");
  switch (state) {
    case PodState::kBound:
      return util::Cat("bound to node ", Str(spec, "nodeName"));
    case PodState::kFinished:
      return util::Cat("finished (phase ", Str(Field(pod, "status"), "phase"), ")");
    case PodState::kOtherScheduler: {
      std::string_view other = Str(spec, "schedulerName");
      return util::Cat("not ", name, "'s to schedule: its spec.schedulerName is \"",
                       other.empty() ? "default-scheduler" : other,
                       "\" (give --scheduler-name to explain another gpuplane scheduler's pods)");
    }
    case PodState::kDeleting:
      return "being deleted (metadata.deletionTimestamp is set)";
    case PodState::kGated: {
      std::string gates;
      for (const json& g : Field(spec, "schedulingGates")) {
        gates += util::Cat(gates.empty() ? "" : ", ", Str(g, "name"));
      }
      return util::Cat("held by its scheduling gates (", gates,
                       "): no scheduler places it until whoever added them removes them");
    }
    case PodState::kWaitingForClaim:
      return util::Cat("waiting for the ResourceClaim of its claim ", claim,
                       ", which the resourceclaim controller (kube-controller-manager) makes from "
                       "the template; if none appears, check that the template exists in the "
                       "pod's namespace and look at the pod's Events");
    case PodState::kPending:
      break;
  }
  return "";
}

// What a preempting pod's report adds: how many pods it preempts, where, at what cost.
std::string PreemptionText(const sched::PodSet& pods, const sched::Decision& d,
                           const std::string& node) {
  if (d.victims.empty()) {
    return util::Cat(" Waiting for the pods it preempted on node ", node, " to leave.");
  }
  std::string names;
  for (size_t i = 0; i < d.victims.size() && i < 5; ++i) {
    names += (i > 0 ? ", " : "") + pods.pods[d.victims[i]].key;
  }
  if (d.victims.size() > 5) names += util::Cat(" and ", d.victims.size() - 5, " more");
  return util::Cat(" Preempting ", d.victims.size(), d.victims.size() == 1 ? " pod" : " pods",
                   " of lower priority (", names, "; ", static_cast<int64_t>(d.lost_gpu_seconds),
                   " GPU-seconds of work lost) to run on node ", node, ".");
}

double WallSeconds() { return util::WallClock().Now(); }

// Unix seconds of a creationTimestamp, 0 when it cannot be read.
double CreatedAt(std::string_view rfc3339) { return sched::UnixSeconds(rfc3339).value_or(0); }

double CreatedAgo(const json& pod) {
  double created = CreatedAt(Str(Field(pod, "metadata"), "creationTimestamp"));
  if (created == 0) return -1;
  return WallSeconds() - created;
}

// Keeps in `oldest` the earliest of the creationTimestamps offered. The API server writes
// them in one form (UTC, whole seconds), so the earliest is the least as text.
void KeepOldest(std::string& oldest, std::string_view created) {
  if (!created.empty() && (oldest.empty() || created < oldest)) oldest = created;
}

// A pass's pending pods by reason, with the oldest creation of each reason and of the
// waiting gangs, for the pending metrics.
class PendingTally {
 public:
  void Note(const std::string& reason, std::string_view created, int gang) {
    auto& [count, oldest] = by_reason_[reason];
    ++count;
    KeepOldest(oldest, created);
    if (gang >= 0) {
      gangs_.insert(gang);
      KeepOldest(gang_oldest_, created);
    }
  }
  // `waiting` pods wait for claims from templates, the oldest created at `waiting_oldest`.
  void Publish(SchedulerMetrics& metrics, int64_t waiting, std::string_view waiting_oldest) {
    if (waiting > 0)
      by_reason_["Waiting/ClaimFromTemplate"] = {waiting, std::string(waiting_oldest)};
    std::map<std::string, SchedulerMetrics::Pending> gauges;
    for (const auto& [reason, p] : by_reason_) gauges[reason] = {p.first, CreatedAt(p.second)};
    metrics.SetPending(gauges, static_cast<int64_t>(gangs_.size()), CreatedAt(gang_oldest_));
  }

 private:
  std::map<std::string, std::pair<int64_t, std::string>> by_reason_;  // pods, oldest
  std::set<int> gangs_;
  std::string gang_oldest_;
};

// A Node the API does not have cannot run a pod: slices (and devices) naming one are not
// offered, with one log line each. (Offline, `gpuplane schedule` keeps them: files may omit
// Node objects.) The cache's objects are not changed: a slice that keeps some devices is
// replaced by a trimmed copy that `loaded` holds.
void DropMissingNodes(ClusterCache::Loaded& loaded, std::set<std::string>& warned) {
  std::set<std::string, std::less<>> nodes;
  for (const api::SourcedObject* o : loaded.cluster) {
    if (const auto* n = std::get_if<api::Node>(&o->object)) nodes.insert(n->metadata.name);
  }
  auto missing = [&](const std::optional<std::string>& node, const std::string& slice) {
    if (!node || nodes.contains(*node)) return false;
    std::string w = util::Cat("ResourceSlice ", slice, " names node ", *node,
                              ", which does not exist: its devices are not offered");
    if (warned.insert(w).second) Log(w);
    return true;
  };
  auto trimmed = std::make_shared<std::vector<api::SourcedObject>>();
  std::vector<size_t> trimmed_at;  // where each trimmed copy goes in `kept`
  api::ObjectRefs kept;
  kept.reserve(loaded.cluster.size());
  for (const api::SourcedObject* o : loaded.cluster) {
    const auto* slice = std::get_if<api::ResourceSlice>(&o->object);
    if (slice != nullptr && missing(slice->spec.node_name, slice->metadata.name)) continue;
    auto device_missing = [&](const api::Device& d) {
      return missing(d.node_name, slice->metadata.name);
    };
    if (slice == nullptr ||
        std::none_of(slice->spec.devices.begin(), slice->spec.devices.end(), device_missing)) {
      kept.push_back(o);
      continue;
    }
    api::SourcedObject copy = *o;
    std::erase_if(std::get<api::ResourceSlice>(copy.object).spec.devices, device_missing);
    trimmed->push_back(std::move(copy));
    trimmed_at.push_back(kept.size());
    kept.push_back(nullptr);
  }
  for (size_t i = 0; i < trimmed_at.size(); ++i) kept[trimmed_at[i]] = &(*trimmed)[i];
  if (!trimmed->empty()) loaded.held.push_back(std::move(trimmed));
  loaded.cluster = std::move(kept);
}

// The queue tree of the Queues among `work`. Queues whose parents do not form a tree (a
// parent missing, a cycle) cannot be honoured; rather than stop scheduling for every tenant,
// they are dropped from `work`, the pass runs without queues (an empty tree) and the problem
// is logged once (a Queue fixed in the API is picked up on the next cycle).
sched::QueueTree QueuesOf(api::ObjectRefs& work, std::set<std::string>& warned) {
  auto is_queue = [](const api::SourcedObject* o) {
    return std::holds_alternative<api::Queue>(o->object);
  };
  std::vector<api::SourcedObject> queues;
  for (const api::SourcedObject* o : work) {
    if (is_queue(o)) queues.push_back(*o);
  }
  absl::StatusOr<sched::QueueTree> tree = sched::QueueTree::Build(queues);
  if (tree.ok()) return *std::move(tree);
  std::string w = util::Cat("queues are not applied: ", std::string(tree.status().message()),
                            "; fix the Queue objects (gpuplane validate names every problem)");
  if (warned.insert(w).second) Log(w);
  std::erase_if(work, is_queue);
  return sched::QueueTree();
}

// The pod's status.extendedResourceClaimStatus.requestMappings.
json MappingsJson(const std::vector<sched::ExtendedRequestMapping>& mappings) {
  json out = json::array();
  for (const sched::ExtendedRequestMapping& m : mappings) {
    out.push_back(
        {{"containerName", m.container}, {"resourceName", m.resource}, {"requestName", m.request}});
  }
  return out;
}

// The claim kube-scheduler would create for the pod's extended resources: its requests, the
// annotation, the pod as controlling owner (the garbage collector deletes it with the pod), and
// a name the server completes.
json ClaimToCreate(const sched::PodInfo& p, const sched::ClaimUse& u) {
  json c = json::parse(api::ToJson(api::EncodeObject(api::Object(*u.claim))));
  json& meta = c["metadata"];
  meta.erase("name");
  meta["generateName"] = u.claim->metadata.name;
  const api::ObjectMeta& pod = p.pod->metadata;
  meta["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                          {"kind", "Pod"},
                                          {"name", pod.name},
                                          {"uid", pod.uid},
                                          {"controller", true}}});
  return c;
}

// Whether a watched change may give this scheduler a pod to place: one of its own pods,
// added or changed, not bound, finished or being deleted.
bool MayBeOurs(std::string_view kind, EventType type, const json& object, const std::string& name) {
  if (kind != "Pod" || type == EventType::kDeleted) return false;
  const json& spec = Field(object, "spec");
  std::string_view phase = Str(Field(object, "status"), "phase");
  std::string_view scheduler = Str(spec, "schedulerName");
  return phase != "Succeeded" && phase != "Failed" && Str(spec, "nodeName").empty() &&
         (scheduler.empty() ? "default-scheduler" : scheduler) == name &&
         !Field(object, "metadata").contains("deletionTimestamp");
}

}  // namespace

Scheduler::Scheduler(const Client& client, SchedulerOptions options)
    : client_(client), writer_(client), options_(std::move(options)) {
  cache_ = std::make_unique<ClusterCache>(
      client_,
      [this](std::string_view kind, EventType type, const json& object) {
        Wake(MayBeOurs(kind, type, object, options_.name));
      },
      options_.absent_recheck_seconds);
  usage_store_ = std::make_unique<QueueUsageStore>(client_, options_.state_namespace,
                                                   util::Cat(options_.name, "-queue-usage"));
}

Scheduler::~Scheduler() { cache_->Stop(); }

void Scheduler::Wake(bool ours) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;
    ours_changed_ = ours_changed_ || ours;
  }
  cv_.notify_one();
}

bool Scheduler::PassDue(std::chrono::steady_clock::time_point now) const {
  return dirty_ && (ours_changed_ || !idle_ || now >= idle_until_);
}

void Scheduler::Stop() {
  stop_ = true;
  cv_.notify_one();
}

bool Scheduler::Ready() const { return cache_->Synced() && cache_->Error().ok(); }

absl::Status Scheduler::Run(const std::function<bool()>& leading) {
  leading_ = leading;
  cache_->Start();
  while (!stop_) {
    if (absl::Status e = cache_->Error(); !e.ok()) {
      cache_->Stop();
      return e;
    }
    LogServedKinds();
    LogTrouble();
    bool synced = cache_->Synced();
    bool lead = leading_();
    metrics_.synced = synced;
    metrics_.leading = lead;
    if (!synced || !lead) {
      if (was_leading_) metrics_.Standby();
      was_leading_ = false;
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_.load(); });
      continue;
    }
    if (!was_leading_) {
      LoadUsage();
      Recover();
      was_leading_ = true;
      idle_ = false;
      std::lock_guard<std::mutex> lock(mu_);
      dirty_ = true;
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100),
                   [this] { return PassDue(std::chrono::steady_clock::now()) || stop_.load(); });
      // Writes that failed are tried again after a backoff even if nothing changes.
      const auto now = std::chrono::steady_clock::now();
      bool retry = std::any_of(backoff_.begin(), backoff_.end(),
                               [&](const auto& b) { return b.second.until <= now; });
      if ((!PassDue(now) && !retry) || stop_) continue;
      dirty_ = false;
      ours_changed_ = false;
    }
    if (absl::Status s = Cycle(); !s.ok()) {
      cache_->Stop();
      return s;
    }
  }
  if (was_leading_ && leading_()) SaveUsage(true);  // for the next leader
  cache_->Stop();
  return absl::OkStatus();
}

void Scheduler::LogServedKinds() {
  std::vector<std::string> now = cache_->Unserved();
  if (now == unserved_) return;
  for (const std::string& kind : now) {
    if (std::find(unserved_.begin(), unserved_.end(), kind) != unserved_.end()) continue;
    // The one kind whose definition gpuplane ships; the others come with their projects'
    // CRDs or the API server's feature gates.
    const bool queue = kind == "gpuplane.io/v1alpha1 Queue";
    Log(util::Cat("the API server does not serve ", kind, ", so none are read (",
                  queue ? "install deploy/crds/queues.gpuplane.io.yaml to use queues"
                        : "its CustomResourceDefinition or feature gate serves it",
                  "); asked again every ", absl::StrFormat("%g", options_.absent_recheck_seconds),
                  " s"));
  }
  for (const std::string& kind : unserved_) {
    if (std::find(now.begin(), now.end(), kind) == now.end()) {
      Log(util::Cat("the API server serves ", kind, " now"));
    }
  }
  unserved_ = std::move(now);
}

void Scheduler::LogTrouble() {
  metrics_.watch_errors = cache_->Failures();
  std::string now_trouble = cache_->Trouble();
  if (now_trouble.empty() && trouble_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return absl::StrFormat("%.0f", std::chrono::duration<double>(now - trouble_since_).count());
  };
  if (now_trouble.empty()) {
    Log(util::Cat("reading the cluster again, after ", seconds(), " s"));
  } else if (trouble_.empty()) {
    trouble_since_ = trouble_logged_ = now;
    Log(util::Cat("cannot read the cluster: ", now_trouble,
                  "; retrying until the API server answers (check the server of ",
                  client_.config().source, ", and that it is up)"));
  } else if (now - trouble_logged_ >= std::chrono::seconds(60)) {
    trouble_logged_ = now;
    Log(util::Cat("still cannot read the cluster, for ", seconds(), " s: ", now_trouble));
  }
  trouble_ = std::move(now_trouble);
}

void Scheduler::LoadUsage() {
  absl::StatusOr<std::optional<QueueUsage>> saved = usage_store_->Load();
  if (!saved.ok()) {
    Log(util::Cat("queues' past use not loaded, going on from what this replica has: ",
                  std::string(saved.status().message())));
    return;
  }
  if (!saved->has_value()) return;
  // Peaks are observations of the same cluster: the higher of ours and the saved ones.
  for (const auto& [hour, peak] : (*saved)->demand_peaks) {
    auto it = demand_.peaks().find(hour);
    demand_.Set(hour, it == demand_.peaks().end() ? peak : std::max(peak, it->second));
  }
  if (options_.usage_half_life <= 0) return;
  QueueUsage now = DecayedTo(**saved, WallSeconds(), options_.usage_half_life);
  usage_ = std::move(now.gpu_seconds);
  held_ = std::move(now.devices);
  usage_at_ = std::chrono::steady_clock::now();
  usage_wall_ = now.saved_at;
  Log(util::Cat("queues' past use loaded from ", usage_store_->Describe(), " (", usage_.size(),
                usage_.size() == 1 ? " queue)" : " queues)"));
}

void Scheduler::SaveUsage(bool now) {
  if (options_.usage_half_life <= 0 && demand_.peaks().empty()) return;
  auto t = std::chrono::steady_clock::now();
  if (!now && usage_saved_ &&
      std::chrono::duration<double>(t - *usage_saved_).count() < kSaveUsageSeconds) {
    return;
  }
  usage_saved_ = t;
  QueueUsage u{.saved_at = WallSeconds(), .demand_peaks = demand_.peaks()};
  if (options_.usage_half_life > 0) {
    u.saved_at = usage_wall_;
    u.gpu_seconds = usage_;
    u.devices = held_;
    u = DecayedTo(u, WallSeconds(), options_.usage_half_life);
  }
  if (absl::Status s = usage_store_->Save(u); !s.ok()) {
    Log(util::Cat("queues' past use not saved (tried again in ", kSaveUsageSeconds,
                  " s): ", std::string(s.message())));
  }
}

// One pass as a cycle runs it: the objects it read (held by `loaded`), the queue tree its
// options point to, and what it decided.
struct Scheduler::Decided {
  ClusterCache::Loaded loaded;
  sched::QueueTree queues;
  int64_t waiting = 0;         // pods waiting for claims from templates
  std::string waiting_oldest;  // the earliest creationTimestamp among them
  std::optional<sched::PassResult> pass;
  // Problems in the objects read (api's diagnostics) and the pass's warnings.
  std::vector<std::string> problems;
};

absl::Status Scheduler::Decide(Decided& d) {
  const auto now = std::chrono::steady_clock::now();
  // The pods a pass needs: those bound and not finished (they hold capacity), and this
  // scheduler's pending pods that are not being deleted, not gated, whose claims from
  // templates exist (`waiting` counts those that do not yet) and that are not backing off.
  d.loaded = cache_->Load([&](const json& pod) {
    PodState state = StateOf(pod, options_.name, *cache_, nullptr);
    if (state == PodState::kWaitingForClaim) {
      ++d.waiting;
      KeepOldest(d.waiting_oldest, Str(Field(pod, "metadata"), "creationTimestamp"));
    }
    if (state == PodState::kBound) return true;
    if (state != PodState::kPending) return false;
    if (backoff_.empty()) return true;
    auto it = backoff_.find(std::string(Str(Field(pod, "metadata"), "uid")));
    return it == backoff_.end() || it->second.until <= now;  // backing off: sits out
  });
  if (warned_.size() > 10'000) warned_.clear();  // a bound on memory; some may log again
  // What api's reader refused (the object is left out of the pass) or the checks across
  // objects found.
  for (const api::Diagnostic& problem : d.loaded.diagnostics) {
    if (problem.is_error()) d.problems.push_back(problem.ToString());
  }
  DropMissingNodes(d.loaded, warned_);
  d.queues = QueuesOf(d.loaded.work, warned_);
  sched::SessionOptions opts;
  opts.queues = &d.queues;  // built once per cycle; the pass does not build it again
  if (options_.usage_half_life > 0) {
    // What each queue held since the last pass, decayed into its past use.
    auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - usage_at_).count();
    usage_at_ = now;
    usage_wall_ = WallSeconds();
    sched::DecayedUsage::AdvanceByName(usage_, held_, seconds, options_.usage_half_life);
    opts.queue_usage = usage_;
    opts.usage_k = options_.usage_k;
  }
  opts.policy = options_.policy;
  // The opportunistic headroom's forecast: how much the other queues' demand rose within
  // the guarantee window from this hour on the last 7 days.
  double window = 0;
  for (const sched::QueueNode& q : d.queues.queues()) {
    if (q.opportunistic) window = std::max(window, q.guarantee_window_seconds);
  }
  if (window > 0) opts.opportunistic_rise = demand_.Rise(WallSeconds(), window);
  budgets_ = Budgets(cache_->List("PodDisruptionBudget"));
  if (options_.preemption) {
    opts.preemption.enabled = true;
    opts.preemption.now = WallSeconds();
    opts.preemption.is_protected = [this](const std::vector<const sched::PodInfo*>& pods) {
      for (const DisruptionBudget& b : budgets_) {
        int64_t covered = 0;
        for (const sched::PodInfo* p : pods) covered += Covers(b, *p) ? 1 : 0;
        if (covered > 0 && covered > b.allowed) return true;
      }
      return false;
    };
  }
  absl::StatusOr<sched::PassResult> pass = sched::RunPass(d.loaded.cluster, d.loaded.work, opts);
  if (!pass.ok()) return pass.status();
  d.problems.insert(d.problems.end(), pass->warnings.begin(), pass->warnings.end());
  d.pass = std::move(*pass);
  return absl::OkStatus();
}

absl::Status Scheduler::Cycle() {
  auto start = std::chrono::steady_clock::now();
  Decided decided;
  if (absl::Status s = Decide(decided); !s.ok()) return s;
  for (const std::string& p : decided.problems) {
    if (warned_.insert(p).second) Log(p);  // once each
  }
  const sched::QueueTree& queues = decided.queues;
  const sched::PassResult* pass = &*decided.pass;
  const int64_t waiting = decided.waiting;

  held_.clear();
  for (size_t q = 0; q < pass->queue_devices.size(); ++q) {
    held_[queues.queues()[q].name] = pass->queue_devices[q];
  }
  if (pass->other_demand >= 0) {
    const double now = WallSeconds();
    demand_.Note(now, pass->other_demand);
    demand_.Prune(now);
  }
  metrics_.SetQueues(held_, usage_);  // before the save: whoever sees the save sees these
  SaveUsage(false);
  std::vector<Job> jobs = Plan(*pass, waiting, decided.waiting_oldest);
  WriteAll(jobs);
  Remember(pass->pods, jobs);
  BackOff(jobs, start);
  // Idle: every pod the pass had to place was placed, and none waits for a claim or backs off.
  size_t unplaced = 0, placed = 0;
  for (const sched::PodInfo& p : pass->pods.pods) unplaced += p.bound_node.empty() ? 1 : 0;
  for (const Job& job : jobs) {
    if (job.done && job.unschedulable.empty()) placed += job.members.size();
  }
  idle_ = waiting == 0 && backoff_.empty() && unplaced == placed;
  idle_until_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(options_.idle_pass_seconds));
  ++metrics_.cycles;
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  metrics_.cycle_seconds = metrics_.cycle_seconds.load() + took.count();
  return absl::OkStatus();
}

void Scheduler::BackOff(const std::vector<Job>& jobs, std::chrono::steady_clock::time_point start) {
  const auto now = std::chrono::steady_clock::now();
  std::set<std::string> failed;
  int longest = 0;
  for (const Job& job : jobs) {
    for (const Job::Member& m : job.members) {
      if (job.done) {
        backoff_.erase(m.pod.uid);
        continue;
      }
      Backoff& b = backoff_[m.pod.uid];
      b.ms = b.ms == 0 ? kFirstRetryMs : std::min(2 * b.ms, kLastRetryMs);
      b.until = now + std::chrono::milliseconds(b.ms);
      longest = std::max(longest, b.ms);
      failed.insert(m.pod.uid);
    }
  }
  // A backoff that had ended when the cycle began and did not fail again is over (the pod was
  // written, is gone, or needed no write).
  std::erase_if(backoff_, [&](const auto& e) {
    return e.second.until <= start && !failed.contains(e.first);
  });
  if (!failed.empty()) {
    Log(util::Cat("writes for ", failed.size(), failed.size() == 1 ? " pod" : " pods",
                  " failed; they sit out of scheduling for up to ", longest,
                  " ms, then are tried again"));
  }
}

absl::StatusOr<Scheduler::Explained> Scheduler::Explain(const std::string& pod,
                                                        double timeout_seconds) {
  cache_->Start();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  absl::Status synced = absl::OkStatus();
  while (!cache_->Synced() && synced.ok()) {
    synced = cache_->Error();
    if (synced.ok() && std::chrono::steady_clock::now() > deadline) {
      synced = absl::DeadlineExceededError(
          util::Cat("the cluster's objects were not all listed within ", timeout_seconds,
                    " s: is the API server reachable, and may the kubeconfig's user list and watch "
                    "Pods, ResourceClaims, ResourceSlices, DeviceClasses and Nodes?"));
    }
    if (synced.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (synced.ok()) synced = cache_->Error();
  if (!synced.ok()) {
    cache_->Stop();
    return synced;
  }
  LoadUsage();  // what a new leader starts from
  auto decided = std::make_shared<Decided>();
  absl::Status s = Decide(*decided);
  std::optional<json> object = cache_->Get("Pod", pod);
  std::string claim;
  PodState state = object ? StateOf(*object, options_.name, *cache_, &claim) : PodState::kPending;
  cache_->Stop();
  if (!s.ok()) return s;
  Explained out;
  out.pass = std::shared_ptr<const sched::PassResult>(decided, &*decided->pass);
  out.problems = decided->problems;
  const std::vector<sched::PodInfo>& pods = decided->pass->pods.pods;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].key != pod) continue;
    if (pods[i].bound_node.empty()) {
      out.index = static_cast<int>(i);
    } else {
      out.outside = util::Cat("bound to node ", pods[i].bound_node);
      out.settled = true;
    }
    return out;
  }
  if (!object) {
    return absl::NotFoundError(util::Cat("the cluster has no Pod ", pod,
                                         " (give it as namespace/name, e.g. default/train-0)"));
  }
  out.outside = Outside(state, *object, claim, options_.name);
  out.settled = state == PodState::kBound || state == PodState::kFinished;
  if (out.outside.empty()) {
    // Pending and ours, yet not in the pass: its objects failed the loader's checks.
    out.outside =
        "left out of the pass: its objects did not pass gpuplane's checks (see the problems "
        "above)";
  }
  return out;
}

std::vector<Scheduler::Job> Scheduler::Plan(const sched::PassResult& pass, int64_t waiting,
                                            std::string_view waiting_oldest) {
  std::vector<Job> jobs;
  std::map<std::string, size_t> gang_jobs;  // gang object "Kind/ns/name" -> job
  PendingTally pending;
  std::set<std::string> preempted;  // victims already in a job (a gang's members share them)
  const sched::PodSet& pods = pass.pods;
  const model::Inventory& inv = pass.snapshot->inventory();
  for (size_t i = 0; i < pods.pods.size(); ++i) {
    const sched::PodInfo& p = pods.pods[i];
    if (!p.bound_node.empty()) continue;
    const sched::Decision& d = pass.decisions[i];
    const api::ObjectMeta& m = p.pod->metadata;
    PodRef ref{m.namespace_name, m.name, m.uid};
    if (!d.status.ok() || d.node == model::kNoId) {
      std::string reason =
          util::Cat(sched::CodeName(d.status.code), "/", sched::StageName(d.status.stage));
      pending.Note(reason, m.creation_timestamp, p.gang);
      std::string message = sched::Render(d.status);
      std::string hint = sched::Hint(d.status);
      if (!hint.empty()) message += util::Cat(message.ends_with('.') ? " " : ". ", hint);
      Job job;
      if (d.nominated != model::kNoId) {
        job.nominated = inv.nodes()[d.nominated].name;
        message += PreemptionText(pods, d, job.nominated);
        for (size_t v : d.victims) {
          const sched::PodInfo& victim = pods.pods[v];
          if (!preempted.insert(victim.key).second) continue;
          bool covered = false;
          for (const DisruptionBudget& b : budgets_) covered = covered || Covers(b, victim);
          const api::ObjectMeta& vm = victim.pod->metadata;
          job.victims.emplace_back(PodRef{vm.namespace_name, vm.name, vm.uid}, covered);
        }
      }
      if (reported_[m.uid] == message) continue;
      job.members.push_back({ref, "", -1, json(), {}});
      job.unschedulable = message;
      jobs.push_back(std::move(job));
      continue;
    }
    Job::Member member{ref, inv.nodes()[d.node].name, -1, json(), {}};
    std::optional<json> cached = cache_->Get("Pod", p.key);
    if (!cached) continue;
    member.cached_pod = *cached;
    member.created_ago = CreatedAgo(*cached);
    for (const auto& [key, allocation] : d.claims) {
      member.claims.emplace_back(key, AllocationJson(allocation));
    }
    member.volumes = d.volumes;
    for (const sched::ClaimUse& u : p.claims) {
      bool used = std::any_of(d.claims.begin(), d.claims.end(),
                              [&](const auto& c) { return c.first == u.key; });
      if (!u.extended || !used) continue;
      member.extended_key = u.key;
      if (!cache_->Has("ResourceClaim", u.key)) member.extended_create = ClaimToCreate(p, u);
      member.extended_mappings = MappingsJson(p.extended_mappings);
    }
    const sched::Gang* g = p.gang >= 0 ? &pods.gangs[p.gang] : nullptr;
    if (g != nullptr && (g->kind == "PodGroup" || g->kind == "Workload")) {
      std::string object = util::Cat(g->kind, "/", KeyPart(g->key, 0), "/", KeyPart(g->key, 1));
      auto [it, fresh] = gang_jobs.emplace(object, jobs.size());
      if (fresh) {
        Job job;
        job.gang_kind = g->kind;
        job.gang_ns = KeyPart(g->key, 0);
        job.gang_name = KeyPart(g->key, 1);
        jobs.push_back(std::move(job));
      }
      jobs[it->second].members.push_back(std::move(member));
      continue;
    }
    Job job;
    job.members.push_back(std::move(member));
    jobs.push_back(std::move(job));
  }
  pending.Publish(metrics_, waiting, waiting_oldest);

  return jobs;
}

void Scheduler::Remember(const sched::PodSet& pods, const std::vector<Job>& jobs) {
  std::map<std::string, std::string> reported;  // only pods still pending are remembered
  for (const sched::PodInfo& p : pods.pods) {
    auto it = reported_.find(p.pod->metadata.uid);
    if (p.bound_node.empty() && it != reported_.end()) reported.insert(*it);
  }
  for (const Job& job : jobs) {
    if (job.done && !job.unschedulable.empty()) {
      reported[job.members[0].pod.uid] = job.unschedulable;
    }
  }
  reported_ = std::move(reported);
}

}  // namespace gpuplane::kube
