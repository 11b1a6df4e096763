#include "kube/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/storage_types.h"
#include "api/writer.h"
#include "kube/json_field.h"
#include "sched/fair_share.h"
#include "sched/pass.h"
#include "sched/queues.h"
#include "sched/status.h"
#include "util/strings.h"

namespace gpuplane::kube {

// A PodDisruptionBudget as preemption reads it: the pods it selects in its namespace, and how
// many of them may be disrupted now (status.disruptionsAllowed; 0 until its controller says).
struct DisruptionBudget {
  std::string ns;
  nlohmann::json selector;  // null: selects nothing
  int64_t allowed = 0;
};

namespace {

using nlohmann::json;

void Log(const std::string& msg) { std::fprintf(stderr, "gpuplane scheduler: %s\n", msg.c_str()); }

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

double CreatedAgo(const json& pod) {
  std::string ts(Str(Field(pod, "metadata"), "creationTimestamp"));
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, ts, &t, &err)) return -1;
  return absl::ToDoubleSeconds(absl::Now() - t);
}

std::string Split(const std::string& key, size_t part) {
  std::vector<std::string> parts = absl::StrSplit(key, '/');
  return part < parts.size() ? parts[part] : "";
}

using DeviceId = std::tuple<std::string, std::string, std::string>;  // driver, pool, device

void AddDevices(const json& allocation, std::set<DeviceId>& out) {
  if (!allocation.is_object() || !allocation.contains("devices")) return;
  for (const json& r : Field(allocation["devices"], "results")) {
    out.emplace(Str(r, "driver"), Str(r, "pool"), Str(r, "device"));
  }
}

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

std::vector<DisruptionBudget> Budgets(const std::vector<json>& pdbs) {
  std::vector<DisruptionBudget> out;
  for (const json& b : pdbs) {
    DisruptionBudget budget;
    budget.ns = Str(Field(b, "metadata"), "namespace");
    const json& spec = Field(b, "spec");
    if (spec.contains("selector")) budget.selector = spec["selector"];  // null: selects nothing
    const json& status = Field(b, "status");
    if (status.contains("disruptionsAllowed") && status["disruptionsAllowed"].is_number_integer()) {
      budget.allowed = status["disruptionsAllowed"].get<int64_t>();
    }
    out.push_back(std::move(budget));
  }
  return out;
}

// A label selector (matchLabels, matchExpressions) against a pod's labels.
bool Selects(const json& selector, const std::map<std::string, std::string>& labels) {
  if (!selector.is_object()) return false;
  const json& match = Field(selector, "matchLabels");
  for (const auto& [key, value] : match.items()) {
    auto it = labels.find(key);
    if (it == labels.end() || !value.is_string() || it->second != value.get<std::string>()) {
      return false;
    }
  }
  for (const json& e : Field(selector, "matchExpressions")) {
    if (!e.is_object()) return false;
    std::string_view op = Str(e, "operator");
    auto it = labels.find(std::string(Str(e, "key")));
    bool has = it != labels.end();
    bool in = false;
    for (const json& v : Field(e, "values")) {
      in = in || (has && v.is_string() && v.get<std::string>() == it->second);
    }
    if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && !has) ||
        (op == "DoesNotExist" && has)) {
      return false;
    }
    if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist") return false;
  }
  return true;
}

bool Covers(const DisruptionBudget& b, const std::string& ns,
            const std::map<std::string, std::string>& labels) {
  return b.ns == ns && Selects(b.selector, labels);
}

bool Covers(const DisruptionBudget& b, const sched::PodInfo& p) {
  return Covers(b, p.pod->metadata.namespace_name, p.pod->metadata.labels);
}

// The job a running pod (as the API serves it) belongs to: its PodGroup or Workload pod group
// and replica, else the pod itself (as sched/preempt.cc groups victims).
std::string JobOf(const json& pod) {
  const json& meta = Field(pod, "metadata");
  std::string_view ns = Str(meta, "namespace");
  const json& labels = Field(meta, "labels");
  if (labels.contains(sched::kPodGroupLabel) && labels[sched::kPodGroupLabel].is_string()) {
    return util::Cat("PodGroup/", ns, "/", labels[sched::kPodGroupLabel].get<std::string>());
  }
  const json& spec = Field(pod, "spec");
  if (spec.contains("workloadRef") && spec["workloadRef"].is_object()) {
    const json& w = spec["workloadRef"];
    return util::Cat("Workload/", ns, "/", Str(w, "name"), "/", Str(w, "podGroup"), "/",
                     Str(w, "podGroupReplicaKey"));
  }
  return util::Cat("Pod/", ns, "/", Str(meta, "name"));
}

// Whether this scheduler marked the pod preempted (DisruptionTarget, PreemptionByScheduler,
// naming it).
bool MarkedBy(const json& pod, const std::string& scheduler) {
  const json& status = Field(pod, "status");
  for (const json& c : Field(status, "conditions")) {
    if (Str(c, "type") == "DisruptionTarget" && Str(c, "status") == "True" &&
        Str(c, "reason") == "PreemptionByScheduler" &&
        Str(c, "message").find(util::Cat("(", scheduler, ")")) != std::string_view::npos) {
      return true;
    }
  }
  return false;
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

}  // namespace

// One unit of writes: a single pod, or the members of one gang object decided together; or
// one pod's unschedulable report.
struct Scheduler::Job {
  struct Member {
    PodRef pod;
    std::string node;
    double created_ago = -1;
    json cached_pod;
    std::vector<std::pair<std::string, json>> claims;  // "ns/name", allocation
    // Unbound WaitForFirstConsumer claims: each reserved its volume, or annotated with the node
    // to provision one, before binding.
    std::vector<sched::VolumeChoice> volumes;
    // The claim for the pod's extended resources backed by DRA, among `claims` ("" when none):
    // created first when `extended_create` is not null (the object to create), and named in
    // the pod's status with `extended_mappings` before binding.
    std::string extended_key;
    json extended_create;
    json extended_mappings;
  };
  std::string gang_kind, gang_ns, gang_name;  // empty for single pods
  std::vector<Member> members;
  std::string unschedulable;  // the reason to report, for a report
  // A report of a pod that preempts: the node it waits for, and the victims this job evicts
  // (with whether a PodDisruptionBudget covers each: then through the Eviction API).
  std::string nominated;
  std::vector<std::pair<PodRef, bool>> victims;
  bool done = false;
};

Scheduler::Scheduler(const Client& client, SchedulerOptions options)
    : client_(client), writer_(client), options_(std::move(options)) {
  cache_ = std::make_unique<ClusterCache>(
      client_, [this] { Wake(); }, options_.absent_recheck_seconds);
  usage_store_ = std::make_unique<QueueUsageStore>(client_, options_.state_namespace,
                                                   util::Cat(options_.name, "-queue-usage"));
}

Scheduler::~Scheduler() { cache_->Stop(); }

void Scheduler::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;
  }
  cv_.notify_one();
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
    bool synced = cache_->Synced();
    bool lead = leading_();
    metrics_.synced = synced;
    metrics_.leading = lead;
    if (!synced || !lead) {
      was_leading_ = false;
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_.load(); });
      continue;
    }
    if (!was_leading_) {
      LoadUsage();
      Recover();
      was_leading_ = true;
      std::lock_guard<std::mutex> lock(mu_);
      dirty_ = true;
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return dirty_ || stop_.load(); });
      // Writes that failed are tried again after a backoff even if nothing changes.
      const auto now = std::chrono::steady_clock::now();
      bool retry = std::any_of(backoff_.begin(), backoff_.end(),
                               [&](const auto& b) { return b.second.until <= now; });
      if ((!dirty_ && !retry) || stop_) continue;
      dirty_ = false;
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

namespace {

double WallSeconds() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

}  // namespace

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
  int64_t waiting = 0;  // pods waiting for claims from templates
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
    if (state == PodState::kWaitingForClaim) ++d.waiting;
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
  std::vector<Job> jobs = Plan(*pass, waiting);
  WriteAll(jobs);
  Remember(pass->pods, jobs);
  BackOff(jobs, start);
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

std::vector<Scheduler::Job> Scheduler::Plan(const sched::PassResult& pass, int64_t waiting) {
  std::vector<Job> jobs;
  std::map<std::string, size_t> gang_jobs;  // gang object "Kind/ns/name" -> job
  std::map<std::string, int64_t> pending;
  std::set<int> gangs_waiting;
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
      ++pending[reason];
      if (p.gang >= 0) gangs_waiting.insert(p.gang);
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
      std::string object = util::Cat(g->kind, "/", Split(g->key, 0), "/", Split(g->key, 1));
      auto [it, fresh] = gang_jobs.emplace(object, jobs.size());
      if (fresh) {
        Job job;
        job.gang_kind = g->kind;
        job.gang_ns = Split(g->key, 0);
        job.gang_name = Split(g->key, 1);
        jobs.push_back(std::move(job));
      }
      jobs[it->second].members.push_back(std::move(member));
      continue;
    }
    Job job;
    job.members.push_back(std::move(member));
    jobs.push_back(std::move(job));
  }
  if (waiting > 0) pending["Waiting/ClaimFromTemplate"] = waiting;
  metrics_.SetPending(pending, static_cast<int64_t>(gangs_waiting.size()));

  return jobs;
}

void Scheduler::WriteAll(std::vector<Job>& jobs) {
  // The writes, in parallel; the cycle ends when all are done.
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  int n = std::max(1, std::min<int>(options_.writers, static_cast<int>(jobs.size())));
  for (int w = 0; w < n && !jobs.empty(); ++w) {
    workers.emplace_back([&] {
      for (size_t j = next++; j < jobs.size(); j = next++) Execute(jobs[j]);
    });
  }
  for (std::thread& t : workers) t.join();
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

bool Scheduler::WritePod(const Job& job, size_t i, std::vector<std::string>& allocated) {
  const Job::Member& m = job.members[i];
  for (const auto& [key, allocation] : m.claims) {
    std::optional<json> claim = cache_->Get("ResourceClaim", key);
    if (!claim) {
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ResourceClaim ", key,
                    " is not in the cache"));
      return false;
    }
    absl::StatusOr<json> written = writer_.AllocateClaim(*claim, allocation, m.pod);
    if (!written.ok()) {
      metrics_.ApiError("claim");
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ",
                    std::string(written.status().message())));
      return false;
    }
    cache_->Assume("ResourceClaim", *written);
    allocated.push_back(key);
  }
  // As kube-scheduler's VolumeBinding does: a volume reserved for each claim, or the node named
  // for its provisioner, which makes the volume where the pod runs.
  for (const sched::VolumeChoice& v : m.volumes) {
    absl::Status s;
    if (v.volume.empty()) {
      s = writer_.Annotate(PersistentVolumeClaimPath(Split(v.claim, 0), Split(v.claim, 1)),
                           api::kSelectedNodeAnnotation, m.node);
    } else {
      std::optional<json> pv = cache_->Get("PersistentVolume", v.volume);
      std::string rv(pv ? Str(Field(*pv, "metadata"), "resourceVersion") : "");
      s = writer_.ReserveVolume(v.volume, rv, Split(v.claim, 0), Split(v.claim, 1), v.uid);
    }
    if (!s.ok()) {
      metrics_.ApiError("volume");
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ", std::string(s.message())));
      return false;
    }
  }
  if (!m.extended_key.empty() &&
      Str(Field(Field(m.cached_pod, "status"), "extendedResourceClaimStatus"),
          "resourceClaimName") != Split(m.extended_key, 1)) {
    absl::Status s =
        writer_.SetExtendedClaimStatus(m.pod, Split(m.extended_key, 1), m.extended_mappings);
    if (!s.ok()) {
      metrics_.ApiError("pod status");
      Log(std::string(s.message()));
      return false;
    }
  }
  absl::Status s = writer_.Bind(m.pod, m.node);
  if (!s.ok() && s.code() != absl::StatusCode::kAlreadyExists) {
    metrics_.ApiError("binding");
    Log(std::string(s.message()));
    return false;
  }
  json pod = m.cached_pod;
  pod["spec"]["nodeName"] = m.node;
  std::string rv(Str(Field(pod, "metadata"), "resourceVersion"));
  int64_t v = 0;
  pod["metadata"]["resourceVersion"] = std::to_string((absl::SimpleAtoi(rv, &v) ? v : 0) + 1);
  cache_->Assume("Pod", std::move(pod));
  metrics_.Attempt("scheduled");
  if (m.created_ago >= 0) metrics_.Latency(m.created_ago);
  return true;
}

void Scheduler::Report(Job& job) {
  const PodRef& pod = job.members[0].pod;
  // The preemptor's report and nomination first: a pass that sees a victim leaving then also
  // sees the node held for the pod it leaves for (pods come in one watch stream, in order),
  // so it waits instead of preempting another victim; and no victim goes for a preemptor
  // that could not be told (deleted, say).
  absl::Status s = writer_.MarkUnschedulable(pod, job.unschedulable, options_.name, job.nominated);
  metrics_.Attempt("unschedulable");
  if (!s.ok()) {
    if (s.code() != absl::StatusCode::kNotFound) {
      metrics_.ApiError("unschedulable");
      Log(std::string(s.message()));
    }
    return;
  }
  // Every victim marked before any is evicted: a leader that finds a marked victim still
  // running finishes the preemption of its whole job (Recover).
  std::string why = util::Cat("preempted by ", pod.ns, "/", pod.name, " (", options_.name,
                              "), which will run on node ", job.nominated);
  for (const auto& [victim, eviction] : job.victims) {
    if (!leading_()) return;
    if (absl::Status m = writer_.MarkPreempted(victim, why, options_.name); !m.ok()) {
      metrics_.ApiError("preemption");
      Log(std::string(m.message()));
    }
  }
  bool evicted = true;  // else the job is tried again after its backoff, victims and all
  for (const auto& [victim, eviction] : job.victims) {
    if (!leading_()) return;
    if (absl::Status e = writer_.Evict(victim, eviction); e.ok()) {
      ++metrics_.victims;
    } else {
      evicted = false;
      metrics_.ApiError("preemption");
      Log(std::string(e.message()));
    }
  }
  if (!job.victims.empty() && evicted) ++metrics_.preemptions;
  job.done = evicted;
}

bool Scheduler::CreateExtendedClaims(Job& job) {
  for (Job::Member& m : job.members) {
    if (m.extended_create.is_null()) continue;
    if (!leading_()) return false;
    absl::StatusOr<json> made = writer_.CreateClaim(m.pod.ns, m.extended_create);
    if (!made.ok()) {
      metrics_.ApiError("claim");
      Log(util::Cat("pod ", m.pod.ns, "/", m.pod.name, ": ", std::string(made.status().message())));
      return false;
    }
    std::string key = util::Cat(m.pod.ns, "/", Str(Field(*made, "metadata"), "name"));
    for (auto& [claim, allocation] : m.claims) {
      if (claim == m.extended_key) claim = key;
    }
    m.extended_key = key;
    m.extended_create = json();
    cache_->Assume("ResourceClaim", std::move(*made));
  }
  return true;
}

void Scheduler::Execute(Job& job) {
  if (!leading_()) return;
  if (!job.unschedulable.empty()) return Report(job);
  // Made before anything is written for the pods: a claim made and not used is found again
  // (by its owner) in the next cycle, and the garbage collector deletes it with its pod.
  if (!CreateExtendedClaims(job)) {
    metrics_.Attempt("error");
    return;
  }
  if (job.gang_kind.empty()) {
    std::vector<std::string> allocated;
    if (WritePod(job, 0, allocated)) {
      job.done = true;
      return;
    }
    for (const std::string& key : allocated) {
      absl::Status s = writer_.ReleaseClaim(Split(key, 0), Split(key, 1), job.members[0].pod.uid);
      if (!s.ok()) Log(std::string(s.message()));
    }
    metrics_.Attempt("error");
    return;
  }
  // A gang: the intent first, then every member, then the intent removed.
  json intent = IntentOf(job);
  std::string path = GangObjectPath(job.gang_kind, job.gang_ns, job.gang_name);
  if (absl::Status s = writer_.Annotate(path, kGangIntent, intent.dump()); !s.ok()) {
    metrics_.ApiError("intent");
    Log(std::string(s.message()));
    return;
  }
  bool all = true;
  for (size_t i = 0; i < job.members.size() && all; ++i) {
    std::vector<std::string> allocated;
    all = leading_() && WritePod(job, i, allocated);
  }
  if (!all) {
    if (!leading_()) return;  // the next leader finishes the intent
    RollBack(job.gang_ns, intent);
    metrics_.Attempt("error");
  }
  if (absl::Status s = writer_.Annotate(path, kGangIntent, std::nullopt); !s.ok()) {
    metrics_.ApiError("intent");
    Log(std::string(s.message()));
    return;
  }
  job.done = all;
}

json Scheduler::IntentOf(const Job& job) {
  json intent = {{"members", json::array()}};
  for (const Job::Member& m : job.members) {
    json claims = json::array();
    for (const auto& [key, allocation] : m.claims) {
      claims.push_back({{"name", Split(key, 1)}, {"allocation", allocation}});
    }
    json member = {{"pod", m.pod.name}, {"uid", m.pod.uid}, {"node", m.node}, {"claims", claims}};
    if (!m.extended_key.empty()) {
      member["extended"] = {{"claim", Split(m.extended_key, 1)}, {"mappings", m.extended_mappings}};
    }
    for (const sched::VolumeChoice& v : m.volumes) {
      json choice = {{"claim", Split(v.claim, 1)}, {"uid", v.uid}};
      if (!v.volume.empty()) choice["volume"] = v.volume;
      member["volumes"].push_back(std::move(choice));
    }
    intent["members"].push_back(std::move(member));
  }
  return intent;
}

void Scheduler::FinishPreemptions() {
  std::vector<json> pods = cache_->List("Pod");
  std::set<std::string> jobs;  // jobs with a victim this scheduler marked and that still runs
  auto running = [](const json& p) {
    return !Str(Field(p, "spec"), "nodeName").empty() &&
           !Field(p, "metadata").contains("deletionTimestamp");
  };
  for (const json& p : pods) {
    if (running(p) && MarkedBy(p, options_.name)) jobs.insert(JobOf(p));
  }
  if (jobs.empty()) return;
  std::vector<DisruptionBudget> budgets = Budgets(cache_->List("PodDisruptionBudget"));
  for (const json& p : pods) {
    if (!running(p) || !jobs.contains(JobOf(p))) continue;
    const json& meta = Field(p, "metadata");
    PodRef ref{std::string(Str(meta, "namespace")), std::string(Str(meta, "name")),
               std::string(Str(meta, "uid"))};
    std::map<std::string, std::string> labels;
    for (const auto& [k, v] : Field(meta, "labels").items()) {
      if (v.is_string()) labels[k] = v.get<std::string>();
    }
    bool covered = false;
    for (const DisruptionBudget& b : budgets) covered = covered || Covers(b, ref.ns, labels);
    if (!MarkedBy(p, options_.name)) {
      std::string why = util::Cat("preempted (", options_.name,
                                  "): a member of a job whose preemption a previous leader began");
      if (absl::Status s = writer_.MarkPreempted(ref, why, options_.name); !s.ok()) {
        Log(std::string(s.message()));
      }
    }
    if (absl::Status s = writer_.Evict(ref, covered); s.ok()) {
      ++metrics_.victims;
      Log(util::Cat("pod ", ref.ns, "/", ref.name,
                    ": a preemption a previous leader began is finished (its job goes whole)"));
    } else {
      Log(std::string(s.message()));
    }
  }
}

void Scheduler::Recover() {
  FinishPreemptions();
  for (const char* kind : {"PodGroup", "Workload"}) {
    for (const json& obj : cache_->List(kind)) {
      const json& meta = Field(obj, "metadata");
      const json& annotations = Field(meta, "annotations");
      if (!annotations.contains(kGangIntent)) continue;
      std::string ns(Str(meta, "namespace"));
      std::string name(Str(meta, "name"));
      const json& text = annotations[kGangIntent];
      std::optional<json> intent =
          text.is_string() ? ReadIntent(text.get<std::string>()) : std::nullopt;
      if (!intent) {
        Log(util::Cat(kind, " ", ns, "/", name, ": the annotation ", kGangIntent,
                      " is not an intent this scheduler wrote; removed without acting on it"));
      } else {
        bool forward = RollForward(ns, *intent);
        if (!forward) RollBack(ns, *intent);
        Log(util::Cat(kind, " ", ns, "/", name, ": an open gang intent rolled ",
                      forward ? "forward (every member bound as planned)"
                              : "back (claims released, bound members deleted)"));
        ++(forward ? metrics_.intents_forward : metrics_.intents_back);
      }
      if (absl::Status s =
              writer_.Annotate(GangObjectPath(kind, ns, name), kGangIntent, std::nullopt);
          !s.ok()) {
        Log(std::string(s.message()));
      }
    }
  }
}

bool Scheduler::RollForward(const std::string& ns, const json& intent) {
  // Devices held by claims outside the intent: any of them in the plan makes it invalid.
  std::set<std::string> planned;
  for (const json& m : intent["members"]) {
    for (const json& c : Field(m, "claims")) {
      planned.insert(util::Cat(ns, "/", Str(c, "name")));
    }
  }
  std::set<DeviceId> taken, wanted;
  for (const json& c : cache_->List("ResourceClaim")) {
    if (planned.contains(Informer::KeyOf(c))) continue;
    if (c.contains("status") && c["status"].contains("allocation")) {
      AddDevices(c["status"]["allocation"], taken);
    }
  }
  Job job;
  for (const json& m : intent["members"]) {
    const std::string name(Str(m, "pod")), uid(Str(m, "uid")), node(Str(m, "node"));
    std::optional<json> pod = cache_->Get("Pod", util::Cat(ns, "/", name));
    if (!pod || Str(Field(*pod, "metadata"), "uid") != uid) return false;
    std::string_view bound = Str(Field(*pod, "spec"), "nodeName");
    if (!bound.empty() && bound != node) return false;
    Job::Member member{{ns, name, uid}, node, -1, *pod, {}};
    for (const json& c : Field(m, "claims")) {
      AddDevices(c["allocation"], wanted);
      member.claims.emplace_back(util::Cat(ns, "/", Str(c, "name")), c["allocation"]);
    }
    if (const json& e = Field(m, "extended"); e.is_object()) {
      member.extended_key = util::Cat(ns, "/", Str(e, "claim"));
      member.extended_mappings = Field(e, "mappings");
    }
    for (const json& v : Field(m, "volumes")) {
      member.volumes.push_back({util::Cat(ns, "/", Str(v, "claim")), std::string(Str(v, "uid")),
                                std::string(Str(v, "volume"))});
    }
    job.members.push_back(std::move(member));
  }
  for (const DeviceId& d : wanted) {
    if (taken.contains(d)) return false;
  }
  for (size_t i = 0; i < job.members.size(); ++i) {
    std::vector<std::string> allocated;
    if (!WritePod(job, i, allocated)) return false;
  }
  return true;
}

void Scheduler::RollBack(const std::string& ns, const json& intent) {
  for (const json& m : intent["members"]) {
    PodRef pod{ns, std::string(Str(m, "pod")), std::string(Str(m, "uid"))};
    std::optional<json> cached = cache_->Get("Pod", ns + "/" + pod.name);
    // A member bound meanwhile is deleted (its controller makes a new one); the API is asked,
    // not the cache, which may not have seen the binding yet.
    absl::StatusOr<Response> live = client_.Get(PodPath(ns, pod.name));
    json got = live.ok() && live->ok() ? json::parse(live->body, nullptr, false) : json();
    bool bound = !Str(Field(got, "spec"), "nodeName").empty();
    if (bound || (cached && !Str(Field(*cached, "spec"), "nodeName").empty())) {
      if (absl::Status s = writer_.DeletePod(pod); !s.ok()) Log(std::string(s.message()));
    }
    for (const json& c : Field(m, "claims")) {
      if (absl::Status s = writer_.ReleaseClaim(ns, std::string(Str(c, "name")), pod.uid);
          !s.ok()) {
        Log(std::string(s.message()));
      }
    }
  }
}

}  // namespace gpuplane::kube
