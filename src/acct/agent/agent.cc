#include "acct/agent/agent.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "acct/accountant.h"
#include "acct/agent/http.h"
#include "acct/agent/podresources_client.h"
#include "acct/agent/pods_client.h"
#include "acct/agent/support.h"
#include "acct/genai.h"
#include "acct/ledger.h"
#include "acct/samplers.h"
#include "acct/sources.h"
#include "acct/synthetic.h"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

std::optional<Sharing> SharingNamed(const std::string& name) {
  if (name == "time-slicing") return Sharing::kTimeSlicing;
  if (name == "mps") return Sharing::kMps;
  if (name == "mig") return Sharing::kMig;
  return std::nullopt;
}

// Reads and parses an optional input file; `what` names the flag in errors.
template <class T, class Parse>
absl::Status ReadInput(const std::string& path, const char* what, Parse parse, T& into) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> text = util::ReadFile(path);
  absl::StatusOr<T> parsed = text.ok() ? parse(*text, path) : absl::StatusOr<T>(text.status());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        util::Cat(what, ": ", std::string(parsed.status().message())));
  }
  into = std::move(*parsed);
  return absl::OkStatus();
}

// The options' numbers, checked here too and not only by the command line's flags: a NaN
// interval would make the loop's sleep undefined, a zero bucket divide by zero.
absl::Status CheckOptions(const AgentOptions& opt) {
  auto bad = [](const char* flag, double v, const char* want) {
    return absl::InvalidArgumentError(util::Cat(flag, " ", v, ": expected ", want));
  };
  if (!std::isfinite(opt.interval) || opt.interval < 0) {
    return bad("--interval", opt.interval, "a finite number of seconds, 0 or more");
  }
  if (!std::isfinite(opt.bucket) || opt.bucket < 1) {
    return bad("--ledger-bucket", opt.bucket, "a finite number of seconds, 1 or more");
  }
  if (!std::isfinite(opt.ownership_refresh) || opt.ownership_refresh < 0) {
    return bad("--ownership-refresh", opt.ownership_refresh,
               "a finite number of seconds, 0 or more");
  }
  if (opt.max_passes < 0) return bad("--max-passes", opt.max_passes, "0 or more");
  if (opt.synthetic_seconds < 1)
    return bad("--synthetic-seconds", opt.synthetic_seconds, "1 or more");
  return absl::OkStatus();
}

}  // namespace

class Agent::Impl {
 public:
  Impl(const AgentOptions& opt, const util::Clock& clock) : opt_(opt), clock_(clock) {}

  absl::Status Init() {
    if (absl::Status s = CheckOptions(opt_); !s.ok()) return s;
    if (absl::Status s = ReadInput<PodIndex>(opt_.pods, "--pods", ParsePodsJson, pods_); !s.ok())
      return s;
    if (absl::Status s = ReadInput<Prices>(opt_.prices, "--prices", ParsePrices, prices_); !s.ok())
      return s;
    FindApiServer();
    if (absl::Status s = MakeSampler(); !s.ok()) return s;
    MakeAccountant();
    if (absl::Status s = OpenLedger(); !s.ok()) return s;
    if (!opt_.record.empty()) {
      record_.open(opt_.record, std::ios::app);
      if (!record_) {
        return absl::InvalidArgumentError(
            util::Cat("--record ", opt_.record, ": cannot open for appending"));
      }
    }
    state_.accountant = accountant_.get();
    state_.problems = &problems_;
    state_.clock = &clock_;
    state_.last_pass_wall = clock_.Now();
    state_.stale_after = std::max(10.0, 5 * opt_.interval);
    return absl::OkStatus();
  }

  AgentState& state() { return state_; }

  // One sampling pass; false when the recording ended and the agent should stop.
  bool Pass() {
    bool more = sampler_->Next(clock_.Now(), pass_, sampler_errors_);
    if (!more && opt_.exit_at_end) return false;
    for (const DeviceSample& d : pass_.devices) uuid_by_index_[d.index] = d.uuid;
    Fetched fetched = Fetch();  // network calls, outside the lock
    std::vector<AuditFinding> findings;
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      problems_.Merge(sampler_errors_);
      Apply(std::move(fetched));
      if (more) Account(findings);
    }
    for (const AuditFinding& f : findings) {
      LogLine({{"level", "warn"},
               {"event", "isolation_violation"},
               {"pid", f.pid},
               {"gpu_uuid", f.gpu_uuid},
               {"cgroup", f.cgroup},
               {"pod", f.pod},
               {"allocated", f.allocated},
               {"reason", f.reason}});
    }
    if (more) Record();
    if (!more && opt_.interval <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return true;
  }

 private:
  struct Fetched {
    std::optional<absl::StatusOr<PodIndex>> pods;
    std::optional<absl::StatusOr<Ownership>> ownership;
  };

  void FindApiServer() {
    if (!opt_.pods.empty() || opt_.sampler == "synthetic") return;
    if (!opt_.apiserver.empty()) {
      api_ = ApiServer{opt_.apiserver, "", ""};
    } else if (absl::StatusOr<ApiServer> in_cluster = InClusterApiServer(); in_cluster.ok()) {
      api_ = *in_cluster;
    } else {
      problems_.Report("pods_unavailable",
                       util::Cat(std::string(in_cluster.status().message()),
                                 "; pods are named by UID and containers by ID"));
    }
  }

  absl::Status MakeSampler() {
    if (opt_.sampler == "nvml") {
      auto nvml = std::make_unique<NvmlSource>(opt_.nvml_library);
      if (!nvml->available()) {
        problems_.Report("nvml_not_available",
                         util::Cat(nvml->why_not(),
                                   "; serving without GPU samples, everything else keeps working"));
      }
      sampler_ = std::move(nvml);
      return absl::OkStatus();
    }
    if (opt_.sampler == "replay") {
      if (opt_.replay.empty()) {
        return absl::InvalidArgumentError("--sampler replay needs --replay FILE");
      }
      absl::StatusOr<Recording> rec = ReadRecording(opt_.replay);
      if (!rec.ok()) {
        return absl::InvalidArgumentError(
            util::Cat("--replay: ", std::string(rec.status().message())));
      }
      if (!rec->problems.empty()) {
        problems_.Report("replay_line", rec->problems.front(),
                         static_cast<int64_t>(rec->problems.size()));
      }
      sampler_ = std::make_unique<ReplaySource>(std::move(*rec));
      return absl::OkStatus();
    }
    if (opt_.sampler == "synthetic") return MakeSyntheticSampler();
    return absl::InvalidArgumentError(
        util::Cat("--sampler ", opt_.sampler, ": expected nvml, replay or synthetic"));
  }

  absl::Status MakeSyntheticSampler() {
    std::optional<Sharing> sharing = SharingNamed(opt_.synthetic);
    if (!sharing)
      return absl::InvalidArgumentError("--synthetic: expected time-slicing, mps or mig");
    SyntheticSpec spec{*sharing,  opt_.synthetic_pods, opt_.synthetic_seconds,
                       opt_.seed, opt_.synthetic_gpus, opt_.synthetic_processes};
    std::vector<UsageProfile> profiles;
    if (!opt_.genai.empty()) {
      absl::StatusOr<std::vector<UsageProfile>> loaded = LoadGenaiProfiles(opt_.genai);
      if (!loaded.ok()) {
        return absl::InvalidArgumentError(
            util::Cat("--genai: ", std::string(loaded.status().message())));
      }
      profiles = std::move(*loaded);
      spec.profiles = &profiles;
    }
    Synthetic syn = MakeSynthetic(spec);
    fixed_ownership_ = syn.ownership;
    for (const SyntheticTruth& t : syn.truth) synthetic_pids_[t.pid] = t.who;
    sampler_ = std::make_unique<ReplaySource>(std::move(syn.recording));
    return absl::OkStatus();
  }

  // Who runs each process. The synthetic sampler's processes are its own pods.
  void MakeAccountant() {
    PidResolver base = ProcResolver(opt_.proc_root, pods_);
    if (opt_.sampler == "synthetic") {
      base = [by_pid = synthetic_pids_](int64_t pid) -> std::optional<ProcessOwner> {
        auto it = by_pid.find(pid);
        if (it == by_pid.end()) return std::nullopt;
        return ProcessOwner{it->second, "synthetic", false};
      };
    }
    resolver_ = std::make_shared<CachedResolver>(base, problems_);
    accountant_ = std::make_unique<Accountant>(
        [resolver = resolver_](int64_t pid) { return (*resolver)(pid); }, prices_);
    if (fixed_ownership_) accountant_->SetOwnership(*fixed_ownership_);
  }

  // Continues the counters from the ledger; a replay resumes at its last committed pass.
  absl::Status OpenLedger() {
    if (opt_.ledger.empty()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<Ledger>> l =
        Ledger::Open(opt_.ledger, Ledger::Access::kReadWrite, opt_.bucket);
    if (!l.ok()) return l.status();
    ledger_ = std::move(*l);
    absl::StatusOr<Attribution> totals = ledger_->Totals();
    if (!totals.ok()) return totals.status();
    absl::StatusOr<std::optional<double>> last = ledger_->LastTime();
    if (!last.ok()) return last.status();
    accountant_->AddTotals(*totals);
    if (*last) {
      if (auto* replay = dynamic_cast<ReplaySource*>(sampler_.get())) replay->SkipBefore(**last);
      LogLine({{"level", "info"},
               {"message", "continuing from the ledger"},
               {"ledger", opt_.ledger},
               {"last_t", **last},
               {"pods", totals->pods.size()}});
    }
    if (!pods_.by_uid.empty()) SaveLabels(pods_);
    return absl::OkStatus();
  }

  void SaveLabels(const PodIndex& pods) {
    if (!ledger_) return;
    if (absl::Status s = ledger_->SetPodLabels(pods); !s.ok()) {
      problems_.Report("ledger_write", std::string(s.message()));
    }
  }

  // Pods and device ownership, when due (every --ownership-refresh seconds).
  Fetched Fetch() {
    Fetched f;
    const double now = clock_.Now();
    if (fixed_ownership_ || now < next_refresh_) return f;
    next_refresh_ = now + opt_.ownership_refresh;
    if (api_) f.pods = ListNodePods(*api_, opt_.node);
    if (!opt_.podresources_json.empty()) {
      absl::StatusOr<std::string> text = util::ReadFile(opt_.podresources_json);
      f.ownership = text.ok() ? ParsePodResourcesJson(*text, opt_.podresources_json, uuid_by_index_)
                              : absl::StatusOr<Ownership>(text.status());
    } else if (!opt_.podresources_socket.empty()) {
      f.ownership = ListPodResources(opt_.podresources_socket, uuid_by_index_);
    }
    return f;
  }

  void Apply(Fetched f) {
    if (f.pods && f.pods->ok()) {
      resolver_->SetInner(ProcResolver(opt_.proc_root, **f.pods));
      SaveLabels(**f.pods);
    } else if (f.pods) {
      problems_.Report("pods_unavailable", std::string(f.pods->status().message()));
    }
    if (f.ownership && f.ownership->ok()) {
      accountant_->SetOwnership(std::move(**f.ownership));
    } else if (f.ownership) {
      problems_.Report(
          opt_.podresources_json.empty() ? "podresources_unavailable" : "podresources_json",
          std::string(f.ownership->status().message()));
    }
  }

  // Attributes the window this pass closes and commits it to the ledger.
  void Account(std::vector<AuditFinding>& findings) {
    double start = accountant_->last_t();
    bool had_window = accountant_->started();
    std::optional<Attribution> window = accountant_->Add(pass_, &findings);
    resolver_->Keep(pass_);
    if (window && had_window && ledger_) {
      if (absl::Status s = ledger_->Append(*window, start, pass_.last_t); !s.ok()) {
        problems_.Report("ledger_write", std::string(s.message()));
      }
    }
    state_.last_pass_wall = clock_.Now();
  }

  void Record() {
    if (!record_.is_open()) return;
    std::string lines;
    for (const DeviceSample& s : pass_.devices) util::Append(lines, ToJsonLine(s), "\n");
    for (const MigSample& s : pass_.migs) util::Append(lines, ToJsonLine(s), "\n");
    for (const ProcessSample& s : pass_.processes) util::Append(lines, ToJsonLine(s), "\n");
    for (const ProcessUtilSample& s : pass_.process_utils) util::Append(lines, ToJsonLine(s), "\n");
    record_ << lines;
    record_.flush();
    if (!record_) {
      std::lock_guard<std::mutex> lock(state_.mu);
      problems_.Report("record_write", util::Cat("--record ", opt_.record, ": write failed"));
    }
  }

  const AgentOptions& opt_;
  const util::Clock& clock_;
  Problems problems_;
  PodIndex pods_;
  Prices prices_;
  std::optional<ApiServer> api_;
  std::unique_ptr<Sampler> sampler_;
  ErrorCounts sampler_errors_;  // cumulative, as the samplers count them
  std::optional<Ownership> fixed_ownership_;
  std::map<int64_t, ContainerRef> synthetic_pids_;
  std::shared_ptr<CachedResolver> resolver_;
  std::unique_ptr<Accountant> accountant_;
  std::unique_ptr<Ledger> ledger_;
  std::ofstream record_;
  AgentState state_;
  Recording pass_;
  std::map<int, std::string> uuid_by_index_;
  double next_refresh_ = 0;  // on clock_
};

Agent::Agent(const AgentOptions& options, const util::Clock& clock)
    : impl_(std::make_unique<Impl>(options, clock)) {}
Agent::~Agent() = default;
absl::Status Agent::Init() { return impl_->Init(); }
bool Agent::Pass() { return impl_->Pass(); }
AgentState& Agent::state() { return impl_->state(); }

absl::Status RunAgent(const AgentOptions& opt, const std::atomic<bool>& stop) {
  Agent agent(opt, util::WallClock());
  if (absl::Status s = agent.Init(); !s.ok()) {
    LogLine({{"level", "error"}, {"message", std::string(s.message())}});
    return s;
  }
  std::unique_ptr<AgentServer> server;
  if (!opt.listen.empty()) {
    server = std::make_unique<AgentServer>(agent.state());
    absl::StatusOr<std::string> where = server->Start(opt.listen);
    if (!where.ok()) {
      LogLine({{"level", "error"}, {"message", std::string(where.status().message())}});
      return where.status();
    }
    LogLine({{"level", "info"},
             {"message", "serving /metrics, /healthz and /attribution"},
             {"listen", *where}});
  }
  int64_t passes = 0;
  double pass_cpu = 0;  // CPU time of the passes themselves (not sleeping, not serving)
  auto next_tick = std::chrono::steady_clock::now();
  while (!stop.load()) {
    const double cpu_start = ThreadCpuSeconds();
    if (!agent.Pass()) break;
    ++passes;
    pass_cpu += ThreadCpuSeconds() - cpu_start;
    if (opt.max_passes > 0 && passes >= opt.max_passes) break;
    // Sleep until the next tick, waking to check `stop`.
    next_tick += std::chrono::microseconds(static_cast<int64_t>(opt.interval * 1e6));
    next_tick = std::max(next_tick, std::chrono::steady_clock::now());
    while (!stop.load() && std::chrono::steady_clock::now() < next_tick) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next_tick - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
    }
  }
  server.reset();  // stops serving before the state goes away
  LogLine({{"level", "info"},
           {"message", "stopped"},
           {"passes", passes},
           {"pass_cpu_seconds", pass_cpu},
           {"errors", agent.state().problems->counts()}});
  return absl::OkStatus();
}

}  // namespace gpuplane::acct
