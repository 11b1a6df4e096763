// `gpuplane attribute`: per-pod GPU usage and cost from a recording, offline.
#include <cstdio>
#include <memory>
#include <string>

#include "acct/attribution.h"
#include "acct/recording.h"
#include "acct/sources.h"
#include "cli/commands.h"
#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct AttributeOptions {
  std::string replay, proc_root = "/proc", pods, podresources, prices;
  std::string output = "json";
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "gpuplane attribute: %s\n", message.c_str());
  return kExitUsage;
}

double Dollars(int64_t nano) { return static_cast<double>(nano) / 1e9; }
double Round(double v, double scale) {
  return static_cast<double>(std::llround(v * scale)) / scale;
}

int RunAttribute(const AttributeOptions& opt) {
  absl::StatusOr<acct::Recording> rec = acct::ReadRecording(opt.replay);
  if (!rec.ok()) return Fail(std::string(rec.status().message()));
  for (const std::string& p : rec->problems) std::fprintf(stderr, "%s\n", p.c_str());
  acct::PodIndex pods;
  if (!opt.pods.empty()) {
    absl::StatusOr<std::string> text = util::ReadFile(opt.pods);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    absl::StatusOr<acct::PodIndex> parsed = acct::ParsePodsJson(*text, opt.pods);
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    pods = std::move(*parsed);
  }
  acct::Ownership ownership;
  if (!opt.podresources.empty()) {
    std::map<int, std::string> uuid_by_index;
    for (const acct::DeviceSample& d : rec->devices) uuid_by_index[d.index] = d.uuid;
    absl::StatusOr<std::string> text = util::ReadFile(opt.podresources);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    absl::StatusOr<acct::Ownership> parsed =
        acct::ParsePodResourcesJson(*text, opt.podresources, uuid_by_index);
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    ownership = std::move(*parsed);
  }
  acct::Prices prices;
  if (!opt.prices.empty()) {
    absl::StatusOr<std::string> text = util::ReadFile(opt.prices);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    absl::StatusOr<acct::Prices> parsed = acct::ParsePrices(*text, opt.prices);
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    prices = std::move(*parsed);
  }
  acct::Attribution a =
      acct::Attribute(*rec, acct::ProcResolver(opt.proc_root, std::move(pods)), ownership, prices);
  nlohmann::ordered_json doc;
  nlohmann::ordered_json jp = nlohmann::ordered_json::array();
  for (const acct::PodUsage& p : a.pods) {
    nlohmann::ordered_json j = {{"namespace", p.who.namespace_name},
                                {"pod", p.who.pod},
                                {"container", p.who.container},
                                {"gpu_uuid", p.gpu_uuid}};
    if (!p.mig_instance.empty()) j["mig_instance"] = p.mig_instance;
    j["sm_seconds"] = Round(p.sm_seconds, 1e6);
    j["memory_byte_seconds"] = Round(p.memory_byte_seconds, 1);
    j["max_memory_bytes"] = p.max_memory_bytes;
    j["cost"] = Dollars(p.cost_nano);
    jp.push_back(j);
  }
  nlohmann::ordered_json jd = nlohmann::ordered_json::array();
  for (const acct::DeviceUsage& d : a.devices) {
    jd.push_back({{"gpu_uuid", d.gpu_uuid},
                  {"model", d.model},
                  {"shared", d.shared},
                  {"busy_seconds", Round(d.busy_seconds, 1e6)},
                  {"unattributed_sm_seconds", Round(d.unattributed_sm_seconds, 1e6)},
                  {"idle_cost", Dollars(d.idle_cost_nano)},
                  {"cost", Dollars(d.cost_nano)}});
  }
  nlohmann::ordered_json ja = nlohmann::ordered_json::array();
  for (const acct::AuditFinding& f : a.audit) {
    ja.push_back({{"pid", f.pid},
                  {"gpu_uuid", f.gpu_uuid},
                  {"cgroup", f.cgroup},
                  {"pod", f.pod},
                  {"allocated", f.allocated},
                  {"reason", f.reason}});
  }
  doc["pods"] = jp;
  doc["devices"] = jd;
  doc["audit"] = ja;
  std::string out = doc.dump() + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return rec->problems.empty() ? kExitOk : kExitProblems;
}

}  // namespace

Command AddAttributeCommand(CLI::App& app) {
  auto opt = std::make_shared<AttributeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "attribute", "Per-pod GPU usage and cost from a recording (offline attribution)");
  cmd->add_option("--replay", opt->replay, "Recording (JSONL) to attribute")->required();
  cmd->add_option("--proc-root", opt->proc_root, "A /proc tree for PID -> cgroup")
      ->capture_default_str();
  cmd->add_option("--pods", opt->pods, "kubectl get pods -o json of the node");
  cmd->add_option("--podresources-json", opt->podresources,
                  "kubelet PodResources List response in JSON");
  cmd->add_option("--prices", opt->prices, "YAML/JSON map of GPU model to price per GPU-hour");
  cmd->add_option("-o,--output", opt->output, "Output format")->check(CLI::IsMember({"json"}));
  return Command{cmd, [opt] { return RunAttribute(*opt); }};
}

}  // namespace gpuplane::cli
