// `gpuplane cel eval`: compile and evaluate one CEL expression, optionally against a device
// of a ResourceSlice file exactly as the allocator would; or, with --cases, every case of a
// JSON-lines file (one result line each), for differential tests against Kubernetes' CEL.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
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
  std::string cases;
  std::vector<std::string> vars;
  std::string device_file;
  std::string device_name;
  std::string output = "text";
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "gpuplane cel eval: %s\n", message.c_str());
  return kExitUsage;
}

using DeviceMap = std::map<std::string, std::pair<std::string, api::Device>>;

// Every device of the file's ResourceSlices by name, with its driver.
absl::StatusOr<DeviceMap> LoadDevices(const std::string& file) {
  api::Loader loader;
  absl::Status s = loader.AddPath(file);
  if (!s.ok()) return s;
  api::LoadResult r = loader.Finish();
  if (r.errors() > 0) {
    for (const api::Diagnostic& d : r.diagnostics) {
      if (d.is_error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    }
    return absl::InvalidArgumentError(file + " has errors (listed above)");
  }
  DeviceMap devices;
  for (const api::SourcedObject& obj : r.objects) {
    const auto* slice = std::get_if<api::ResourceSlice>(&obj.object);
    if (slice == nullptr) continue;
    for (const api::Device& d : slice->spec.devices) {
      devices.emplace(d.name, std::make_pair(slice->spec.driver, d));
    }
  }
  return devices;
}

absl::StatusOr<std::pair<std::string, api::Device>> FindDevice(const DeviceMap& devices,
                                                               const std::string& file,
                                                               const std::string& name) {
  if (auto it = devices.find(name); it != devices.end()) return it->second;
  std::string known;
  for (const auto& [n, d] : devices) {
    if (known.size() > 200) break;
    known += " " + n;
  }
  return absl::NotFoundError(
      "no device \"" + name + "\" in " + file +
      (known.empty() ? " (it has no devices)" : "; devices include:" + known));
}

// Compiles and evaluates; the result line of `-o json`.
nlohmann::json Evaluate(const std::string& expr, const cel::CompileOptions& options,
                        const cel::MapActivation& activation, cel::Value* value = nullptr) {
  absl::StatusOr<cel::Program> program = cel::Program::Compile(expr, options);
  if (!program.ok())
    return {{"error", std::string(program.status().message())}, {"kind", "compile"}};
  cel::Value result = program->Evaluate(activation);
  if (result.is_error()) return {{"error", result.str()}, {"kind", "runtime"}};
  if (value != nullptr) *value = result;
  return {{"value", cel::ValueToTypedJson(result)}};
}

// Binds NAME=JSON pairs (typed encoding) into the activation and declares them.
int BindVars(const std::vector<std::string>& vars, cel::CompileOptions& options,
             cel::MapActivation& activation) {
  for (const std::string& v : vars) {
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
  return kExitOk;
}

int RunCelEval(const CelOptions& o) {
  cel::CompileOptions options;
  cel::MapActivation activation;
  if (int rc = BindVars(o.vars, options, activation); rc != kExitOk) return rc;
  if (!o.device_file.empty() || !o.device_name.empty()) {
    if (o.device_file.empty() || o.device_name.empty()) {
      return Usage("--device and --device-name go together");
    }
    absl::StatusOr<DeviceMap> devices = LoadDevices(o.device_file);
    if (!devices.ok()) return Usage(std::string(devices.status().message()));
    absl::StatusOr<std::pair<std::string, api::Device>> found =
        FindDevice(*devices, o.device_file, o.device_name);
    if (!found.ok()) return Usage(std::string(found.status().message()));
    options.variables.emplace_back("device");
    options.dra_device = true;  // checked as the allocator checks selectors
    activation.Bind("device", cel::DeviceValue(found->first, found->second));
  }
  cel::Value value;
  nlohmann::json result = Evaluate(o.expr, options, activation, &value);
  if (o.output == "json") {
    std::printf("%s\n", result.dump().c_str());
  } else if (result.contains("value")) {
    std::printf("%s\n", cel::ToCelText(value).c_str());
  } else {
    const std::string message = result["error"].get<std::string>();
    std::printf("%s\n",
                result["kind"] == "compile" ? message.c_str() : ("error: " + message).c_str());
  }
  return result.contains("value") ? kExitOk : kExitProblems;
}

// One case line: {"expr": "...", "bindings": {NAME: typed value}, "device": "NAME"}; the
// conformance vectors' lines are cases (their other fields are ignored).
nlohmann::json RunCase(const nlohmann::json& c, const DeviceMap& devices, const CelOptions& o) {
  if (!c.is_object() || !c.contains("expr") || !c["expr"].is_string()) {
    return {{"error", "expected an object with a string \"expr\""}, {"kind", "input"}};
  }
  cel::CompileOptions options;
  cel::MapActivation activation;
  if (c.contains("bindings")) {
    if (!c["bindings"].is_object()) {
      return {{"error", "\"bindings\" must be an object"}, {"kind", "input"}};
    }
    for (const auto& [name, typed] : c["bindings"].items()) {
      absl::StatusOr<cel::Value> value = cel::ValueFromTypedJson(typed);
      if (!value.ok()) {
        return {{"error", "binding " + name + ": " + std::string(value.status().message())},
                {"kind", "input"}};
      }
      options.variables.push_back(name);
      activation.Bind(name, *value);
    }
  }
  if (c.contains("device") && o.device_file.empty()) {
    return {{"error", "the case names a device: give --device SLICES.yaml"}, {"kind", "input"}};
  }
  if (c.contains("device")) {
    absl::StatusOr<std::pair<std::string, api::Device>> found =
        c["device"].is_string() ? FindDevice(devices, o.device_file, c["device"].get<std::string>())
                                : absl::InvalidArgumentError("\"device\" must be a device name");
    if (!found.ok()) return {{"error", std::string(found.status().message())}, {"kind", "input"}};
    options.variables.emplace_back("device");
    options.dra_device = true;
    activation.Bind("device", cel::DeviceValue(found->first, found->second));
  }
  return Evaluate(c["expr"].get<std::string>(), options, activation);
}

// --cases FILE ("-": standard input): one JSON result line per case line, in order. Exit 0
// when every line was a well-formed case (whatever the expressions gave), 2 otherwise.
int RunCelCases(const CelOptions& o) {
  DeviceMap devices;
  if (!o.device_file.empty()) {
    absl::StatusOr<DeviceMap> loaded = LoadDevices(o.device_file);
    if (!loaded.ok()) return Usage(std::string(loaded.status().message()));
    devices = std::move(*loaded);
  }
  std::ifstream file;
  if (o.cases != "-") {
    file.open(o.cases);
    if (!file) return Usage("--cases " + o.cases + ": cannot read the file");
  }
  std::istream& in = o.cases == "-" ? std::cin : file;
  int rc = kExitOk;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    nlohmann::json c = nlohmann::json::parse(line, nullptr, false);
    nlohmann::json result = c.is_discarded()
                                ? nlohmann::json{{"error", "not JSON"}, {"kind", "input"}}
                                : RunCase(c, devices, o);
    if (result.value("kind", "") == "input") {
      result["error"] =
          o.cases + ":" + std::to_string(number) + ": " + result["error"].get<std::string>();
      std::fprintf(stderr, "gpuplane cel eval: %s\n", result["error"].get<std::string>().c_str());
      rc = kExitUsage;
    }
    std::printf("%s\n", result.dump().c_str());
  }
  return rc;
}

}  // namespace

Command AddCelCommand(CLI::App& app) {
  auto opt = std::make_shared<CelOptions>();
  CLI::App* cel = app.add_subcommand("cel", "Evaluate CEL expressions as Kubernetes DRA does");
  cel->require_subcommand(1);
  CLI::App* cmd = cel->add_subcommand("eval", "Compile and evaluate one expression");
  cmd->add_option("-e,--expr", opt->expr, "The CEL expression");
  cmd->add_option("--cases", opt->cases,
                  "A JSON-lines file of cases ({\"expr\", \"bindings\", \"device\"}; - for "
                  "standard input): prints one JSON result line per case");
  cmd->add_option("--var", opt->vars,
                  "NAME=JSON variable binding in the typed-value encoding, e.g. x={\"int\":\"3\"}");
  cmd->add_option("--device", opt->device_file, "A ResourceSlice file (YAML or JSON)");
  cmd->add_option("--device-name", opt->device_name, "The device to bind as `device`");
  cmd->add_option("-o,--output", opt->output, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  return Command{cmd, [opt] {
                   if (opt->expr.empty() == opt->cases.empty())
                     return Usage("give --expr or --cases (one)");
                   if (!opt->cases.empty() && !opt->device_name.empty()) {
                     return Usage("--device-name is for --expr; a case names its device");
                   }
                   return opt->cases.empty() ? RunCelEval(*opt) : RunCelCases(*opt);
                 }};
}

}  // namespace gpuplane::cli
