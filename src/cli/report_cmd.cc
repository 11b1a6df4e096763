// `gpuplane report`: usage and cost from the agent's ledger, grouped and over a period.
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "acct/ledger.h"
#include "cli/commands.h"
#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::cli {

using util::Fixed;
namespace {

struct ReportOptions {
  std::string ledger, since, until, group_by = "namespace", output = "table";
};

int ReportFail(const absl::Status& s) { return cli::Fail("report", s); }

// Unix seconds ("1700000000", "1.7e9") or RFC 3339 ("2026-11-30T12:00:00Z").
std::optional<double> ParseTime(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != nullptr && *end == '\0' && end != text.c_str()) {
    if (!std::isfinite(v)) return std::nullopt;  // "nan", "inf": not a time
    return v;
  }
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, text, &t, &err)) return absl::ToUnixMicros(t) / 1e6;
  return std::nullopt;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

int RunReport(const ReportOptions& opt) {
  std::optional<double> since = ParseTime(opt.since), until = ParseTime(opt.until);
  if (!opt.since.empty() && !since) {
    return ReportFail(absl::InvalidArgumentError(util::Cat(
        "--since ", opt.since, ": expected unix seconds or RFC 3339 (2026-11-30T00:00:00Z)")));
  }
  if (!opt.until.empty() && !until) {
    return ReportFail(absl::InvalidArgumentError(util::Cat(
        "--until ", opt.until, ": expected unix seconds or RFC 3339 (2026-11-30T00:00:00Z)")));
  }
  absl::StatusOr<std::unique_ptr<acct::Ledger>> ledger =
      acct::Ledger::Open(opt.ledger, acct::Ledger::Access::kReadOnly);
  if (!ledger.ok()) return ReportFail(ledger.status());
  absl::StatusOr<std::vector<acct::ReportRow>> rows = (*ledger)->Report(since, until, opt.group_by);
  if (!rows.ok()) return ReportFail(rows.status());
  std::string out;
  if (opt.output == "json") {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    for (const acct::ReportRow& r : *rows) {
      doc.push_back({{"group", r.group},
                     {"pods", r.pods},
                     {"sm_seconds", r.sm_seconds},
                     {"memory_byte_seconds", r.memory_byte_seconds},
                     {"max_memory_bytes", r.max_memory_bytes},
                     {"cost", static_cast<double>(r.cost_nano) / 1e9}});
    }
    out = nlohmann::ordered_json{{"group_by", opt.group_by}, {"rows", doc}}.dump() + "\n";
  } else if (opt.output == "csv") {
    out = "group,pods,sm_seconds,memory_byte_seconds,max_memory_bytes,cost\n";
    for (const acct::ReportRow& r : *rows) {
      std::string group = r.group;
      if (group.find_first_of(",\"\n") != std::string::npos) {
        std::string q = "\"";
        for (char c : group) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        group = q + "\"";
      }
      util::Append(out, group, ",", r.pods, ",", Fixed(r.sm_seconds, 6), ",",
                   Fixed(r.memory_byte_seconds, 0), ",", r.max_memory_bytes, ",",
                   Fixed(static_cast<double>(r.cost_nano) / 1e9, 9), "\n");
    }
  } else {
    char line[512];
    std::snprintf(line, sizeof line, "%-40s %5s %12s %16s %12s %12s\n", opt.group_by.c_str(),
                  "pods", "GPU-hours", "memory GiB-h", "max GiB", "cost $");
    out += line;
    acct::ReportRow total;
    for (const acct::ReportRow& r : *rows) {
      std::snprintf(
          line, sizeof line, "%-40s %5lld %12.4f %16.4f %12.2f %12.4f\n", r.group.c_str(),
          static_cast<long long>(r.pods), r.sm_seconds / 3600, r.memory_byte_seconds / kGiB / 3600,
          static_cast<double>(r.max_memory_bytes) / kGiB, static_cast<double>(r.cost_nano) / 1e9);
      out += line;
      total.pods += r.pods;
      total.sm_seconds += r.sm_seconds;
      total.memory_byte_seconds += r.memory_byte_seconds;
      total.max_memory_bytes = std::max(total.max_memory_bytes, r.max_memory_bytes);
      total.cost_nano += r.cost_nano;
    }
    std::snprintf(line, sizeof line, "%-40s %5lld %12.4f %16.4f %12.2f %12.4f\n", "TOTAL",
                  static_cast<long long>(total.pods), total.sm_seconds / 3600,
                  total.memory_byte_seconds / kGiB / 3600,
                  static_cast<double>(total.max_memory_bytes) / kGiB,
                  static_cast<double>(total.cost_nano) / 1e9);
    out += line;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

Command AddReportCommand(CLI::App& app) {
  auto opt = std::make_shared<ReportOptions>();
  CLI::App* cmd =
      app.add_subcommand("report", "GPU usage and cost per namespace, pod or label from a ledger");
  cmd->add_option("--ledger", opt->ledger, "The agent's SQLite ledger")->required();
  cmd->add_option("--since", opt->since, "Start (unix seconds or RFC 3339), inclusive");
  cmd->add_option("--until", opt->until, "End (unix seconds or RFC 3339), exclusive");
  cmd->add_option("--group-by", opt->group_by, "namespace, pod or label:KEY")
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  return Command{cmd, [opt] { return RunReport(*opt); }};
}

}  // namespace gpuplane::cli
