#include "sim/trace.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "sim/csv.h"
#include "util/strings.h"

namespace gpuplane::sim {
namespace {

using csv::Columns;
using csv::Integer;
using csv::ParseTable;
using csv::Table;
using csv::Where;

bool Seconds(const Columns& cols, const std::vector<std::string>& row, const char* col, double& out,
             std::string& problem) {
  const std::string* v = cols.Get(row, col);
  if (v == nullptr || v->empty()) return true;  // optional
  int64_t n = 0;
  if (!Integer(cols, row, col, n, problem)) return false;
  out = static_cast<double>(n);
  return true;
}

}  // namespace

absl::StatusOr<NodeTrace> ParseOpenbNodes(const std::string& text, const std::string& name) {
  Table t = ParseTable(text);
  Columns cols(t, name);
  absl::Status s = cols.Require({"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!s.ok()) return s;
  NodeTrace out;
  for (const auto& [line, row] : t.rows) {
    TraceNode n;
    n.source = Where(name, line);
    if (const std::string* sn = cols.Get(row, "sn"); sn != nullptr) n.name = *sn;
    std::string problem;
    int64_t gpus = 0;
    if (row.size() != t.header.size()) {
      problem = util::Cat("expected ", t.header.size(), " fields, found ", row.size());
    } else if (Integer(cols, row, "cpu_milli", n.cpu_milli, problem) &&
               Integer(cols, row, "memory_mib", n.memory_mib, problem) &&
               Integer(cols, row, "gpu", gpus, problem)) {
      n.model = *cols.Get(row, "model");
      if (gpus > 64) {
        problem = util::Cat("gpu ", gpus, " is more GPUs than a node can have (at most 64)");
      } else if (gpus > 0 && n.model.empty()) {
        problem = "a node with GPUs needs a model";
      } else if (n.name.empty()) {
        problem = "the node has no name (sn)";
      }
      n.gpus = static_cast<int>(gpus);
      if (gpus == 0) n.model.clear();
    }
    if (!problem.empty()) {
      out.problems.push_back(util::Cat(n.source, ": node skipped: ", problem));
      continue;
    }
    out.nodes.push_back(std::move(n));
  }
  return out;
}

absl::StatusOr<NodeTrace> ParseSpotNodes(const std::string& text, const std::string& name) {
  Table t = ParseTable(text);
  Columns cols(t, name);
  absl::Status s = cols.Require({"gpu_model", "gpu_capacity_num", "cpu_num", "node_name"});
  if (!s.ok()) return s;
  NodeTrace out;
  for (const auto& [line, row] : t.rows) {
    TraceNode n;
    n.source = Where(name, line);
    std::string problem;
    int64_t gpus = 0, cpus = 0;
    if (row.size() != t.header.size()) {
      problem = util::Cat("expected ", t.header.size(), " fields, found ", row.size());
    } else if (Integer(cols, row, "gpu_capacity_num", gpus, problem) &&
               Integer(cols, row, "cpu_num", cpus, problem)) {
      n.name = util::Cat("spot-", *cols.Get(row, "node_name"));
      n.model = *cols.Get(row, "gpu_model");
      n.cpu_milli = cpus * 1000;
      if (gpus > 64) problem = util::Cat("gpu_capacity_num ", gpus, " is more than 64");
      if (gpus > 0 && n.model.empty()) problem = "a node with GPUs needs a gpu_model";
      n.gpus = static_cast<int>(gpus);
    }
    if (!problem.empty()) {
      out.problems.push_back(util::Cat(n.source, ": node skipped: ", problem));
      continue;
    }
    out.nodes.push_back(std::move(n));
  }
  return out;
}

absl::StatusOr<PodTrace> ParseOpenbPods(const std::string& text, const std::string& name) {
  Table t = ParseTable(text);
  Columns cols(t, name);
  absl::Status s = cols.Require({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
  if (!s.ok()) return s;
  PodTrace out;
  for (const auto& [line, row] : t.rows) {
    TracePod p;
    p.source = Where(name, line);
    std::string problem;
    int64_t num_gpu = 0, gpu_milli = 0;
    if (row.size() != t.header.size()) {
      problem = util::Cat("expected ", t.header.size(), " fields, found ", row.size());
    } else if (Integer(cols, row, "cpu_milli", p.cpu_milli, problem) &&
               Integer(cols, row, "memory_mib", p.memory_mib, problem) &&
               Integer(cols, row, "num_gpu", num_gpu, problem) &&
               Integer(cols, row, "gpu_milli", gpu_milli, problem) &&
               Seconds(cols, row, "creation_time", p.creation, problem) &&
               Seconds(cols, row, "deletion_time", p.deletion, problem)) {
      p.name = *cols.Get(row, "name");
      if (num_gpu > 64) {
        problem = util::Cat("num_gpu ", num_gpu, " is more GPUs than any node has");
      } else {
        p.num_gpu = static_cast<int>(num_gpu);
        // Sharing applies to single-GPU tasks; several GPUs are always whole.
        gpu_milli = std::clamp<int64_t>(gpu_milli, 0, 1000);
        if (p.num_gpu > 1 || (p.num_gpu == 1 && gpu_milli == 0)) gpu_milli = 1000;
        p.gpu_milli = p.num_gpu == 0 ? 0 : static_cast<int>(gpu_milli);
      }
      if (const std::string* qos = cols.Get(row, "qos"); qos != nullptr) p.qos = *qos;
      if (const std::string* spec = cols.Get(row, "gpu_spec"); spec != nullptr) {
        size_t start = 0;
        while (start <= spec->size() && !spec->empty()) {
          size_t bar = spec->find('|', start);
          if (bar == std::string::npos) bar = spec->size();
          if (bar > start) p.models.push_back(spec->substr(start, bar - start));
          start = bar + 1;
        }
      }
    }
    if (!problem.empty()) {
      out.problems.push_back(util::Cat(p.source, ": pod skipped: ", problem));
      continue;
    }
    out.pods.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<NodeTrace> ReadOpenbNodes(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseOpenbNodes(*text, path);
}

absl::StatusOr<NodeTrace> ReadSpotNodes(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseSpotNodes(*text, path);
}

absl::StatusOr<PodTrace> ReadOpenbPods(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseOpenbPods(*text, path);
}

}  // namespace gpuplane::sim
