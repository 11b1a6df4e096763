// `gpuplane validate FILE|DIR...`: load objects, print each one and every problem.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "api/loader.h"
#include "cli/commands.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> paths;
  std::string output = "text";
  bool quiet = false;
};

void AppendDiagnosticJson(std::string& out, const api::Diagnostic& d) {
  out += "{\"file\":";
  util::AppendJsonString(out, d.file);
  util::Append(out, ",\"line\":", d.line, ",\"object\":");
  util::AppendJsonString(out, d.object);
  out += ",\"field\":";
  util::AppendJsonString(out, d.field);
  out += ",\"message\":";
  util::AppendJsonString(out, d.message);
  out += "}";
}

std::string RenderJson(const api::LoadResult& r) {
  std::string out = "{\"objects\":[";
  for (size_t i = 0; i < r.objects.size(); ++i) {
    const api::SourcedObject& o = r.objects[i];
    const api::ObjectMeta& m = api::MetaOf(o.object);
    if (i > 0) out += ",";
    out += "{\"kind\":";
    util::AppendJsonString(out, api::KindOf(o.object));
    out += ",\"namespace\":";
    util::AppendJsonString(out, m.namespace_name);
    out += ",\"name\":";
    util::AppendJsonString(out, m.name);
    out += ",\"file\":";
    util::AppendJsonString(out, o.file);
    util::Append(out, ",\"line\":", o.line, "}");
  }
  for (bool errors : {true, false}) {
    out += errors ? "],\"errors\":[" : "],\"warnings\":[";
    bool first = true;
    for (const api::Diagnostic& d : r.diagnostics) {
      if (d.is_error() != errors) continue;
      if (!first) out += ",";
      first = false;
      AppendDiagnosticJson(out, d);
    }
  }
  out += "]}\n";
  return out;
}

int RunValidate(const ValidateOptions& opt) {
  absl::StatusOr<api::LoadResult> read = api::LoadPaths(opt.paths);
  if (!read.ok()) return Fail("validate", read.status());
  const api::LoadResult& r = *read;
  if (opt.output == "json") {
    std::fputs(RenderJson(r).c_str(), stdout);
  } else {
    if (!opt.quiet) {
      for (const api::SourcedObject& o : r.objects) {
        std::printf("%s:%u: %s\n", o.file.c_str(), o.line, api::Label(o.object).c_str());
      }
    }
    for (const api::Diagnostic& d : r.diagnostics) std::printf("%s\n", d.ToString().c_str());
    std::printf("%zu objects, %zu errors, %zu warnings\n", r.objects.size(), r.errors(),
                r.warnings());
  }
  return r.errors() > 0 ? kExitProblems : kExitOk;
}

}  // namespace

Command AddValidateCommand(CLI::App& app) {
  auto opt = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check Kubernetes objects (DeviceClass, ResourceSlice, ResourceClaim, "
      "ResourceClaimTemplate, Pod, Node, PodGroup, Workload) in YAML or JSON files");
  cmd->add_option("paths", opt->paths, "Files or directories (*.yaml, *.yml, *.json)")->required();
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("-q,--quiet", opt->quiet, "Print only problems and the summary (text output)");
  return Command{cmd, [opt] { return RunValidate(*opt); }};
}

}  // namespace gpuplane::cli
