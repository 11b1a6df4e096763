// `gpuplane attribute`: per-pod GPU usage and cost from a recording, offline.
#include <cstdio>
#include <memory>
#include <string>

#include "acct/attribution.h"
#include "acct/attribution_json.h"
#include "acct/recording.h"
#include "acct/sources.h"
#include "cli/commands.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct AttributeOptions {
  std::string replay, proc_root = "/proc", pods, podresources, prices;
  std::string output = "json";
};

int Fail(const absl::Status& s) { return cli::Fail("attribute", s); }

int RunAttribute(const AttributeOptions& opt) {
  absl::StatusOr<acct::Recording> rec = acct::ReadRecording(opt.replay);
  if (!rec.ok()) return Fail(rec.status());
  for (const std::string& p : rec->problems) std::fprintf(stderr, "%s\n", p.c_str());
  acct::PodIndex pods;
  if (!opt.pods.empty()) {
    absl::StatusOr<std::string> text = util::ReadFile(opt.pods);
    if (!text.ok()) return Fail(text.status());
    absl::StatusOr<acct::PodIndex> parsed = acct::ParsePodsJson(*text, opt.pods);
    if (!parsed.ok()) return Fail(parsed.status());
    pods = std::move(*parsed);
  }
  acct::Ownership ownership;
  if (!opt.podresources.empty()) {
    std::map<int, std::string> uuid_by_index;
    for (const acct::DeviceSample& d : rec->devices) uuid_by_index[d.index] = d.uuid;
    absl::StatusOr<std::string> text = util::ReadFile(opt.podresources);
    if (!text.ok()) return Fail(text.status());
    absl::StatusOr<acct::Ownership> parsed =
        acct::ParsePodResourcesJson(*text, opt.podresources, uuid_by_index);
    if (!parsed.ok()) return Fail(parsed.status());
    ownership = std::move(*parsed);
  }
  acct::Prices prices;
  if (!opt.prices.empty()) {
    absl::StatusOr<std::string> text = util::ReadFile(opt.prices);
    if (!text.ok()) return Fail(text.status());
    absl::StatusOr<acct::Prices> parsed = acct::ParsePrices(*text, opt.prices);
    if (!parsed.ok()) return Fail(parsed.status());
    prices = std::move(*parsed);
  }
  acct::Attribution a =
      acct::Attribute(*rec, acct::ProcResolver(opt.proc_root, std::move(pods)), ownership, prices);
  std::string out = acct::AttributionJson(a);
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
