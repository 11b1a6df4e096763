// `gpuplane cel eval`: compile and evaluate one CEL expression, optionally against a device
// of a ResourceSlice file exactly as the allocator would.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "api/loader.h"
#include "cel/device_env.h"
#include "cel/program.h"
#include "cel/typed_json.h"
#include "cli/commands.h"

namespace gpuplane::cli {
namespace {

struct CelOptions {
  std::string expr;
  std::vector<std::string> vars;
  std::string device_file;
  std::string device_name;
  std::string output = "text";
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "gpuplane cel eval: %s\n", message.c_str());
  return kExitUsage;
}

// Finds the device in the file's ResourceSlices; returns its driver and device.
absl::StatusOr<std::pair<std::string, api::Device>> FindDevice(const CelOptions& o) {
  api::Loader loader;
  absl::Status s = loader.AddPath(o.device_file);
  if (!s.ok()) return s;
  api::LoadResult r = loader.Finish();
  if (r.errors() > 0) {
    for (const api::Diagnostic& d : r.diagnostics) {
      if (d.is_error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    }
    return absl::InvalidArgumentError(o.device_file + " has errors (listed above)");
  }
  std::vector<std::string> names;
  for (const api::SourcedObject& obj : r.objects) {
    const auto* slice = std::get_if<api::ResourceSlice>(&obj.object);
    if (slice == nullptr) continue;
    for (const api::Device& d : slice->spec.devices) {
      if (d.name == o.device_name) return std::make_pair(slice->spec.driver, d);
      if (names.size() < 10) names.push_back(d.name);
    }
  }
  std::string known;
  for (const std::string& n : names) known += " " + n;
  return absl::NotFoundError(
      "no device \"" + o.device_name + "\" in " + o.device_file +
      (known.empty() ? " (it has no devices)" : "; devices include:" + known));
}

void Print(const CelOptions& o, const nlohmann::json& json_line, const std::string& text) {
  if (o.output == "json") {
    std::printf("%s\n", json_line.dump().c_str());
  } else {
    std::printf("%s\n", text.c_str());
  }
}

int RunCelEval(const CelOptions& o) {
  cel::CompileOptions options;
  cel::MapActivation activation;
  for (const std::string& v : o.vars) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) return Usage("--var " + v + ": expected NAME=JSON");
    nlohmann::json j = nlohmann::json::parse(v.substr(eq + 1), nullptr, false);
    if (j.is_discarded()) return Usage("--var " + v.substr(0, eq) + ": the value is not JSON");
    absl::StatusOr<cel::Value> value = cel::ValueFromTypedJson(j);
    if (!value.ok()) {
      return Usage("--var " + v.substr(0, eq) + ": " + std::string(value.status().message()));
    }
    options.variables.push_back(v.substr(0, eq));
    activation.Bind(v.substr(0, eq), *value);
  }
  if (!o.device_file.empty() || !o.device_name.empty()) {
    if (o.device_file.empty() || o.device_name.empty()) {
      return Usage("--device and --device-name go together");
    }
    absl::StatusOr<std::pair<std::string, api::Device>> found = FindDevice(o);
    if (!found.ok()) return Usage(std::string(found.status().message()));
    options.variables.emplace_back("device");
    activation.Bind("device", cel::DeviceValue(found->first, found->second));
  }
  absl::StatusOr<cel::Program> program = cel::Program::Compile(o.expr, options);
  if (!program.ok()) {
    std::string message(program.status().message());
    Print(o, {{"error", message}, {"kind", "compile"}}, message);
    return kExitProblems;
  }
  cel::Value result = program->Evaluate(activation);
  if (result.is_error()) {
    Print(o, {{"error", result.str()}, {"kind", "runtime"}}, "error: " + result.str());
    return kExitProblems;
  }
  Print(o, {{"value", cel::ValueToTypedJson(result)}}, cel::ToCelText(result));
  return kExitOk;
}

}  // namespace

Command AddCelCommand(CLI::App& app) {
  auto opt = std::make_shared<CelOptions>();
  CLI::App* cel = app.add_subcommand("cel", "Evaluate CEL expressions as Kubernetes DRA does");
  cel->require_subcommand(1);
  CLI::App* cmd = cel->add_subcommand("eval", "Compile and evaluate one expression");
  cmd->add_option("-e,--expr", opt->expr, "The CEL expression")->required();
  cmd->add_option("--var", opt->vars,
                  "NAME=JSON variable binding in the typed-value encoding, e.g. x={\"int\":\"3\"}");
  cmd->add_option("--device", opt->device_file, "A ResourceSlice file (YAML or JSON)");
  cmd->add_option("--device-name", opt->device_name, "The device to bind as `device`");
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  return Command{cmd, [opt] { return RunCelEval(*opt); }};
}

}  // namespace gpuplane::cli
