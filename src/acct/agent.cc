#include "acct/agent.h"

#include <httplib.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "acct/accountant.h"
#include "acct/attribution_json.h"
#include "acct/genai.h"
#include "acct/ledger.h"
#include "acct/metrics.h"
#include "acct/podresources_client.h"
#include "acct/pods_client.h"
#include "acct/samplers.h"
#include "acct/sources.h"
#include "acct/synthetic.h"
#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One JSON object per line on stderr.
void LogLine(const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json line = {{"time", WallSeconds()}, {"component", "gpuplane-agent"}};
  line.update(fields);
  std::string s = line.dump() + "\n";
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}

// Counts problems by kind and logs the first of each kind.
class Problems {
 public:
  void Report(const std::string& kind, const std::string& message, int64_t n = 1) {
    counts_[kind] += n;
    if (logged_.insert(kind).second) {
      LogLine({{"level", "warn"}, {"kind", kind}, {"message", message}});
    }
  }
  // Kinds counted elsewhere (the samplers): logs the kinds not seen before.
  void Merge(const ErrorCounts& from) {
    for (const auto& [kind, n] : from) {
      int64_t delta = n - seen_[kind];
      if (delta > 0) Report(kind, util::Cat("sampler error: ", kind), delta);
      seen_[kind] = n;
    }
  }
  const ErrorCounts& counts() const { return counts_; }

 private:
  ErrorCounts counts_, seen_;
  std::set<std::string> logged_;
};

// PID -> container, cached while the PID keeps appearing in passes.
class CachedResolver {
 public:
  CachedResolver(PidResolver inner, Problems& problems)
      : inner_(std::move(inner)), problems_(problems) {}
  std::optional<ProcessOwner> operator()(int64_t pid) {
    auto it = cache_.find(pid);
    if (it != cache_.end()) return it->second;
    std::optional<ProcessOwner> o = inner_(pid);
    if (o && o->unknown) {
      problems_.Report("unknown_pid", util::Cat("process ", pid,
                                                " has no readable cgroup file (it exited, or "
                                                "--proc-root does not show host processes); "
                                                "its usage stays unattributed"));
    }
    cache_.emplace(pid, o);
    return o;
  }
  // New pod information: forget what was resolved with the old.
  void SetInner(PidResolver inner) {
    inner_ = std::move(inner);
    cache_.clear();
  }
  // Drops PIDs absent from `pass` (they may be reused by another process later).
  void Keep(const Recording& pass) {
    std::set<int64_t> live;
    for (const ProcessSample& p : pass.processes) live.insert(p.pid);
    for (const ProcessUtilSample& p : pass.process_utils) live.insert(p.pid);
    std::erase_if(cache_, [&](const auto& kv) { return !live.contains(kv.first); });
  }

 private:
  PidResolver inner_;
  Problems& problems_;
  std::map<int64_t, std::optional<ProcessOwner>> cache_;
};

std::optional<Sharing> SharingNamed(const std::string& name) {
  if (name == "time-slicing") return Sharing::kTimeSlicing;
  if (name == "mps") return Sharing::kMps;
  if (name == "mig") return Sharing::kMig;
  return std::nullopt;
}

int Usage(const std::string& message) {
  LogLine({{"level", "error"}, {"message", message}});
  return 2;
}

// Everything the loop and the HTTP handlers share, behind one mutex.
struct Shared {
  std::mutex mu;
  Accountant* accountant = nullptr;
  Problems* problems = nullptr;
  double last_pass_wall = 0;
  double stale_after = 10;
};

void Serve(httplib::Server& server, Shared& shared) {
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      AgentCounters counters{shared.problems->counts()};
      body = RenderMetrics(shared.accountant->Totals(), counters);
    }
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/attribution", [&](const httplib::Request&, httplib::Response& res) {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      body = AttributionJson(shared.accountant->Totals());
    }
    res.set_content(body, "application/json");
  });
  server.Get("/healthz", [&](const httplib::Request&, httplib::Response& res) {
    double age = 0;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      age = WallSeconds() - shared.last_pass_wall;
      if (age <= shared.stale_after) {
        res.set_content("ok\n", "text/plain");
        return;
      }
    }
    res.status = 503;
    res.set_content(util::Cat("no sampling pass for ", static_cast<int64_t>(age), " s\n"),
                    "text/plain");
  });
}

}  // namespace

int RunAgent(const AgentOptions& opt, const std::atomic<bool>& stop) {
  Problems problems;

  // Inputs that do not change while running.
  PodIndex pods;
  if (!opt.pods.empty()) {
    absl::StatusOr<std::string> text = util::ReadFile(opt.pods);
    absl::StatusOr<PodIndex> parsed =
        text.ok() ? ParsePodsJson(*text, opt.pods) : absl::StatusOr<PodIndex>(text.status());
    if (!parsed.ok()) return Usage(util::Cat("--pods: ", std::string(parsed.status().message())));
    pods = std::move(*parsed);
  }
  Prices prices;
  if (!opt.prices.empty()) {
    absl::StatusOr<std::string> text = util::ReadFile(opt.prices);
    absl::StatusOr<Prices> parsed =
        text.ok() ? ParsePrices(*text, opt.prices) : absl::StatusOr<Prices>(text.status());
    if (!parsed.ok()) return Usage(util::Cat("--prices: ", std::string(parsed.status().message())));
    prices = std::move(*parsed);
  }

  // Live pods from the API server, unless a file gives them.
  std::optional<ApiServer> api;
  if (opt.pods.empty() && opt.sampler != "synthetic") {
    if (!opt.apiserver.empty()) {
      api = ApiServer{opt.apiserver, "", ""};
    } else if (absl::StatusOr<ApiServer> in_cluster = InClusterApiServer(); in_cluster.ok()) {
      api = *in_cluster;
    } else {
      problems.Report("pods_unavailable",
                      util::Cat(std::string(in_cluster.status().message()),
                                "; pods are named by UID and containers by ID"));
    }
  }

  // The sampler.
  std::unique_ptr<Sampler> sampler;
  std::optional<Ownership> fixed_ownership;  // the synthetic sampler knows its owners
  std::map<int64_t, ContainerRef> synthetic_pids;
  if (opt.sampler == "nvml") {
    auto nvml = std::make_unique<NvmlSource>(opt.nvml_library);
    if (!nvml->available()) {
      problems.Report("nvml_not_available", util::Cat("NVML not available (", nvml->why_not(),
                                                      "); serving without GPU samples"));
    }
    sampler = std::move(nvml);
  } else if (opt.sampler == "replay") {
    if (opt.replay.empty()) return Usage("--sampler replay needs --replay FILE");
    absl::StatusOr<Recording> rec = ReadRecording(opt.replay);
    if (!rec.ok()) return Usage(util::Cat("--replay: ", std::string(rec.status().message())));
    if (!rec->problems.empty()) {
      problems.Report("replay_line", rec->problems.front(),
                      static_cast<int64_t>(rec->problems.size()));
    }
    sampler = std::make_unique<ReplaySource>(std::move(*rec));
  } else if (opt.sampler == "synthetic") {
    std::optional<Sharing> sharing = SharingNamed(opt.synthetic);
    if (!sharing) return Usage("--synthetic: expected time-slicing, mps or mig");
    SyntheticSpec spec{*sharing, opt.synthetic_pods, opt.synthetic_seconds,
                       opt.seed, opt.synthetic_gpus, opt.synthetic_processes};
    std::vector<UsageProfile> profiles;
    if (!opt.genai.empty()) {
      absl::StatusOr<std::vector<UsageProfile>> loaded = LoadGenaiProfiles(opt.genai);
      if (!loaded.ok()) {
        return Usage(util::Cat("--genai: ", std::string(loaded.status().message())));
      }
      profiles = std::move(*loaded);
      spec.profiles = &profiles;
    }
    Synthetic syn = MakeSynthetic(spec);
    fixed_ownership = syn.ownership;
    for (const SyntheticTruth& t : syn.truth) synthetic_pids[t.pid] = t.who;
    sampler = std::make_unique<ReplaySource>(std::move(syn.recording));
  } else {
    return Usage(util::Cat("--sampler ", opt.sampler, ": expected nvml, replay or synthetic"));
  }

  // Who runs each process. The synthetic sampler's processes are its own pods.
  PidResolver base = ProcResolver(opt.proc_root, pods);
  if (opt.sampler == "synthetic") {
    base = [by_pid = std::move(synthetic_pids)](int64_t pid) -> std::optional<ProcessOwner> {
      auto it = by_pid.find(pid);
      if (it == by_pid.end()) return std::nullopt;
      return ProcessOwner{it->second, "synthetic", false};
    };
  }
  auto resolver = std::make_shared<CachedResolver>(base, problems);
  Accountant accountant([resolver](int64_t pid) { return (*resolver)(pid); }, prices);
  if (fixed_ownership) accountant.SetOwnership(*fixed_ownership);

  std::unique_ptr<Ledger> ledger;
  if (!opt.ledger.empty()) {
    absl::StatusOr<std::unique_ptr<Ledger>> l = Ledger::Open(opt.ledger, false, opt.bucket);
    if (!l.ok()) return Usage(std::string(l.status().message()));
    ledger = std::move(*l);
    absl::StatusOr<Attribution> totals = ledger->Totals();
    absl::StatusOr<std::optional<double>> last = ledger->LastTime();
    if (!totals.ok() || !last.ok()) {
      return Usage(std::string((totals.ok() ? last.status() : totals.status()).message()));
    }
    accountant.AddTotals(*totals);
    if (*last) {
      if (auto* replay = dynamic_cast<ReplaySource*>(sampler.get())) replay->SkipBefore(**last);
      LogLine({{"level", "info"},
               {"message", "continuing from the ledger"},
               {"ledger", opt.ledger},
               {"last_t", **last},
               {"pods", totals->pods.size()}});
    }
    if (!pods.by_uid.empty()) {
      if (absl::Status s = ledger->SetPodLabels(pods); !s.ok()) {
        problems.Report("ledger_write", std::string(s.message()));
      }
    }
  }
  std::ofstream record;
  if (!opt.record.empty()) {
    record.open(opt.record, std::ios::app);
    if (!record) return Usage(util::Cat("--record ", opt.record, ": cannot open for appending"));
  }

  Shared shared;
  shared.accountant = &accountant;
  shared.problems = &problems;
  shared.last_pass_wall = WallSeconds();
  shared.stale_after = std::max(10.0, 5 * opt.interval);
  httplib::Server server;
  std::thread serving;
  if (!opt.listen.empty()) {
    size_t colon = opt.listen.rfind(':');
    int port = -1;
    if (colon != std::string::npos) {
      try {
        port = std::stoi(opt.listen.substr(colon + 1));
      } catch (const std::exception&) {
      }
    }
    if (port < 0 || port > 65535)
      return Usage(util::Cat("--listen ", opt.listen, ": expected HOST:PORT"));
    std::string host = opt.listen.substr(0, colon);
    Serve(server, shared);
    if (port == 0) {
      port = server.bind_to_any_port(host);
    } else if (!server.bind_to_port(host, port)) {
      port = -1;
    }
    if (port <= 0) {
      return Usage(util::Cat("--listen ", opt.listen, ": cannot listen there (in use?)"));
    }
    LogLine({{"level", "info"},
             {"message", "serving /metrics, /healthz and /attribution"},
             {"listen", util::Cat(host, ":", port)}});
    serving = std::thread([&server] { server.listen_after_bind(); });
  }

  double next_refresh = 0;
  std::map<int, std::string> uuid_by_index;
  Recording pass;
  int64_t passes = 0;
  auto next_tick = std::chrono::steady_clock::now();
  double pass_cpu = 0;  // CPU time of the passes themselves (not sleeping, not serving)
  while (!stop.load()) {
    const double cpu_start = ThreadCpuSeconds();
    ErrorCounts sampler_errors;
    bool more = sampler->Next(WallSeconds(), pass, sampler_errors);
    if (!more) {
      if (opt.exit_at_end) break;
      if (opt.interval <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const DeviceSample& d : pass.devices) uuid_by_index[d.index] = d.uuid;
    // Pods and device ownership, fetched without holding the lock the HTTP handlers need.
    std::optional<absl::StatusOr<PodIndex>> live_pods;
    std::optional<absl::StatusOr<Ownership>> ownership;
    if (!fixed_ownership && WallSeconds() >= next_refresh) {
      next_refresh = WallSeconds() + opt.ownership_refresh;
      if (api) live_pods = ListNodePods(*api, opt.node);
      if (!opt.podresources_json.empty()) {
        absl::StatusOr<std::string> text = util::ReadFile(opt.podresources_json);
        ownership = text.ok() ? ParsePodResourcesJson(*text, opt.podresources_json, uuid_by_index)
                              : absl::StatusOr<Ownership>(text.status());
      } else if (!opt.podresources_socket.empty()) {
        ownership = ListPodResources(opt.podresources_socket, uuid_by_index);
      }
    }
    std::vector<AuditFinding> findings;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      problems.Merge(sampler_errors);
      if (live_pods && live_pods->ok()) {
        resolver->SetInner(ProcResolver(opt.proc_root, **live_pods));
        if (ledger) {
          if (absl::Status s = ledger->SetPodLabels(**live_pods); !s.ok()) {
            problems.Report("ledger_write", std::string(s.message()));
          }
        }
      } else if (live_pods) {
        problems.Report("pods_unavailable", std::string(live_pods->status().message()));
      }
      if (ownership && ownership->ok()) {
        accountant.SetOwnership(std::move(**ownership));
      } else if (ownership) {
        problems.Report(
            opt.podresources_json.empty() ? "podresources_unavailable" : "podresources_json",
            std::string(ownership->status().message()));
      }
      if (more) {
        double start = accountant.last_t();
        bool had_window = accountant.started();
        std::optional<Attribution> window = accountant.Add(pass, &findings);
        resolver->Keep(pass);
        if (window && had_window && ledger) {
          if (absl::Status s = ledger->Append(*window, start, pass.last_t); !s.ok()) {
            problems.Report("ledger_write", std::string(s.message()));
          }
        }
        shared.last_pass_wall = WallSeconds();
      }
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
    if (more && record.is_open()) {
      std::string lines;
      for (const DeviceSample& s : pass.devices) util::Append(lines, ToJsonLine(s), "\n");
      for (const MigSample& s : pass.migs) util::Append(lines, ToJsonLine(s), "\n");
      for (const ProcessSample& s : pass.processes) util::Append(lines, ToJsonLine(s), "\n");
      for (const ProcessUtilSample& s : pass.process_utils)
        util::Append(lines, ToJsonLine(s), "\n");
      record << lines;
      record.flush();
      if (!record)
        problems.Report("record_write", util::Cat("--record ", opt.record, ": write failed"));
    }
    ++passes;
    pass_cpu += ThreadCpuSeconds() - cpu_start;
    if (opt.max_passes > 0 && passes >= opt.max_passes) break;
    // Sleep until the next tick, waking to check `stop`.
    next_tick += std::chrono::microseconds(static_cast<int64_t>(opt.interval * 1e6));
    auto now = std::chrono::steady_clock::now();
    if (next_tick < now) next_tick = now;
    while (!stop.load() && std::chrono::steady_clock::now() < next_tick) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next_tick - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
    }
  }
  if (serving.joinable()) {
    server.stop();
    serving.join();
  }
  LogLine({{"level", "info"},
           {"message", "stopped"},
           {"passes", passes},
           {"pass_cpu_seconds", pass_cpu}});
  return 0;
}

}  // namespace gpuplane::acct
