// `gpuplane allocate`: allocates the claims of a file, in order, against the objects of a
// cluster (DeviceClasses, ResourceSlices, Nodes, already-allocated ResourceClaims), each
// allocation committed before the next is tried.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "alloc/batch.h"
#include "api/loader.h"
#include "api/writer.h"
#include "cli/allocate_cases.h"
#include "cli/commands.h"
#include "cli/timings.h"
#include "nlohmann/json.hpp"
#include "util/clock.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct AllocateOptions {
  std::vector<std::string> objects;
  std::vector<std::string> claims;
  std::string node;
  std::string output = "yaml";
  std::string cases;
};

bool PrintLoadErrors(const api::LoadResult& r) {
  for (const api::Diagnostic& d : r.diagnostics) {
    if (d.is_error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  }
  return r.errors() > 0;
}

int RunAllocate(const AllocateOptions& opt) {
  absl::StatusOr<api::LoadResult> objects = api::LoadPaths(opt.objects);
  if (!objects.ok()) return Fail("allocate", objects.status());
  absl::StatusOr<api::LoadResult> work = api::LoadPaths(opt.claims);
  if (!work.ok()) return Fail("allocate", work.status());
  // Invalid objects leave nothing to allocate against: usage (2), as for unreadable paths.
  if (PrintLoadErrors(*objects) || PrintLoadErrors(*work)) return kExitUsage;
  util::Stopwatch watch;
  absl::StatusOr<alloc::BatchResult> batch = alloc::AllocateInOrder(
      objects->objects, work->objects,
      opt.node.empty() ? std::nullopt : std::optional<std::string>(opt.node));
  if (!batch.ok()) return Fail("allocate", batch.status());
  const double seconds = watch.Elapsed();
  for (const std::string& w : batch->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  size_t allocated = 0;
  std::string yaml;
  for (const alloc::ClaimOutcome& c : batch->claims) {
    allocated += c.allocated ? 1 : 0;
    std::string id = c.claim.metadata.namespace_name + "/" + c.claim.metadata.name;
    if (opt.output == "json") {
      nlohmann::ordered_json line = {{"claim", id}, {"allocated", c.allocated}};
      if (c.allocated) {
        line["node"] = c.node;
        line["results"] = ResultsJson(*c.claim.status.allocation);
      } else {
        line["reasons"] = c.reasons;
      }
      std::printf("%s\n", line.dump().c_str());
    } else {
      yaml += "---\n";
      for (const std::string& r : c.reasons) yaml += "# " + r + "\n";
      api::AppendYaml(yaml, api::EncodeObject(c.claim));
    }
  }
  if (opt.output == "json") {
    nlohmann::ordered_json summary = {
        {"summary", {{"claims", batch->claims.size()}, {"allocated", allocated}}}};
    std::printf("%s\n", summary.dump().c_str());
  } else {
    std::fputs(yaml.c_str(), stdout);
    std::fprintf(stderr, "%zu of %zu claims allocated\n", allocated, batch->claims.size());
  }
  PrintTimings(opt.output == "json", {{"seconds", seconds}});
  return allocated == batch->claims.size() ? kExitOk : kExitProblems;
}

}  // namespace

Command AddAllocateCommand(CLI::App& app) {
  auto opt = std::make_shared<AllocateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "allocate", "Allocate ResourceClaims (and Pods' claims) against a cluster's DRA objects");
  cmd->add_option("--objects", opt->objects,
                  "Files or directories with DeviceClasses, ResourceSlices, Nodes and allocated "
                  "ResourceClaims");
  cmd->add_option("--claims", opt->claims,
                  "Files with ResourceClaims, ResourceClaimTemplates (one claim per use) and "
                  "Pods, allocated in order");
  cmd->add_option("--node", opt->node, "Allocate on this node only (and explain failures)");
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"yaml", "json"}));
  cmd->add_option("--cases", opt->cases,
                  "A JSON-lines file of instances ({\"objects\", \"claims\", \"node\", "
                  "\"check\"}; - for standard input): one JSON result line each")
      ->excludes("--objects", "--claims", "--node");
  return Command{cmd, [opt] {
                   if (!opt->cases.empty()) return RunAllocateCases(opt->cases);
                   if (opt->objects.empty() || opt->claims.empty()) {
                     return Fail("allocate", absl::InvalidArgumentError(
                                                 "give --objects and --claims (or --cases)"));
                   }
                   return RunAllocate(*opt);
                 }};
}

}  // namespace gpuplane::cli
