// `gpuplane generate cluster`: synthetic heterogeneous clusters as DeviceClasses, Nodes and
// ResourceSlices (for examples, benchmarks and what-if studies).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "api/object.h"
#include "api/writer.h"
#include "cli/commands.h"
#include "sim/cluster_generator.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

struct GenerateOptions {
  std::string mix;
  std::string format = "yaml";
  std::string output_dir;
};

void AppendObject(std::string& out, const api::Object& o, bool json, bool& first) {
  api::Doc doc = api::EncodeObject(o);
  if (json) {
    out += first ? "\n" : ",\n";
    api::AppendJson(out, doc, 0);
  } else {
    out += "---\n";
    api::AppendYaml(out, doc);
  }
  first = false;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

std::string Wrap(std::string body, bool json) {
  if (!json) return body;
  return "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" + body + "\n]}\n";
}

int RunGenerate(const GenerateOptions& opt) {
  sim::ClusterSpec spec = sim::ExampleClusterSpec();
  if (!opt.mix.empty()) {
    absl::StatusOr<sim::ClusterSpec> parsed = sim::ParseClusterMix(opt.mix);
    if (!parsed.ok()) {
      std::fprintf(stderr, "gpuplane generate cluster: --mix: %s\n",
                   std::string(parsed.status().message()).c_str());
      return kExitUsage;
    }
    spec = *parsed;
  }
  absl::StatusOr<sim::GeneratedCluster> cluster = sim::GenerateCluster(spec);
  if (!cluster.ok()) {
    std::fprintf(stderr, "gpuplane generate cluster: %s\n",
                 std::string(cluster.status().message()).c_str());
    return kExitUsage;
  }
  bool json = opt.format == "json";
  std::string ext = json ? ".json" : ".yaml";
  if (opt.output_dir.empty()) {
    std::string out;
    bool first = true;
    for (const api::DeviceClass& c : cluster->classes) AppendObject(out, c, json, first);
    for (const sim::GeneratedNode& n : cluster->nodes) {
      AppendObject(out, n.node, json, first);
      for (const api::ResourceSlice& s : n.slices) AppendObject(out, s, json, first);
    }
    out = Wrap(std::move(out), json);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  }
  std::error_code ec;
  std::filesystem::create_directories(opt.output_dir, ec);
  if (ec) {
    std::fprintf(stderr, "gpuplane generate cluster: %s: %s\n", opt.output_dir.c_str(),
                 ec.message().c_str());
    return kExitRuntime;
  }
  auto write = [&](const std::string& name, std::string body) {
    std::string path = opt.output_dir + "/" + name + ext;
    if (!WriteFile(path, Wrap(std::move(body), json))) {
      std::fprintf(stderr, "gpuplane generate cluster: cannot write %s\n", path.c_str());
      return false;
    }
    return true;
  };
  std::string classes;
  bool first = true;
  for (const api::DeviceClass& c : cluster->classes) AppendObject(classes, c, json, first);
  if (!write("device-classes", std::move(classes))) return kExitRuntime;
  for (const sim::GeneratedNode& n : cluster->nodes) {
    std::string body;
    first = true;
    AppendObject(body, n.node, json, first);
    for (const api::ResourceSlice& s : n.slices) AppendObject(body, s, json, first);
    if (!write("node-" + n.node.metadata.name, std::move(body))) return kExitRuntime;
  }
  std::fprintf(stderr, "wrote %zu nodes to %s\n", cluster->nodes.size(), opt.output_dir.c_str());
  return kExitOk;
}

}  // namespace

Command AddGenerateCommand(CLI::App& app) {
  auto opt = std::make_shared<GenerateOptions>();
  CLI::App* gen = app.add_subcommand("generate", "Generate synthetic inputs");
  gen->require_subcommand(1);
  CLI::App* cmd = gen->add_subcommand(
      "cluster", "A heterogeneous GPU cluster as NVIDIA's DRA driver publishes it");
  cmd->add_option("--mix", opt->mix,
                  "Node groups PRODUCT[+mig]=NODES[xGPUS], comma-separated, e.g. "
                  "h100=2,a100-80gb+mig=1x4,t4=1x4 (default: the examples/ cluster)");
  cmd->add_option("--format", opt->format, "Output format")->check(CLI::IsMember({"yaml", "json"}));
  cmd->add_option("--output-dir", opt->output_dir,
                  "Write device-classes and one file per node here instead of stdout");
  return Command{cmd, [opt] { return RunGenerate(*opt); }};
}

}  // namespace gpuplane::cli
