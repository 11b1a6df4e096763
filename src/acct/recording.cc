#include "acct/recording.h"

#include <cmath>

#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

using Json = nlohmann::json;

// Field readers: false (with `problem`) when the field is missing or of the wrong type/range.
bool Num(const Json& j, const char* key, double& out, std::string& problem) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>())) {
    problem = util::Cat("\"", key, "\" must be a number");
    return false;
  }
  out = it->get<double>();
  if (out < 0 || out > 1e11) {  // seconds since the epoch: up to the year 5138
    problem = util::Cat("\"", key, "\" is ", out, ", outside 0..1e11 seconds");
    return false;
  }
  return true;
}

bool Int(const Json& j, const char* key, int64_t& out, std::string& problem, int64_t lo = 0,
         int64_t hi = INT64_MAX) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    problem = util::Cat("\"", key, "\" must be an integer");
    return false;
  }
  out = it->get<int64_t>();
  if (out < lo || out > hi) {
    problem = util::Cat("\"", key, "\" is ", out, ", outside ", lo, "..", hi);
    return false;
  }
  return true;
}

bool Str(const Json& j, const char* key, std::string& out, std::string& problem) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    problem = util::Cat("\"", key, "\" must be a non-empty string");
    return false;
  }
  out = it->get<std::string>();
  return true;
}

// One sample per type; each returns the problem ("" when the sample was added to `r`).
std::string Device(const Json& j, double t, Recording& r) {
  DeviceSample s;
  s.t = t;
  std::string problem;
  int64_t index = 0, util = 0;
  if (!Str(j, "uuid", s.uuid, problem) || !Int(j, "index", index, problem, 0, 1023) ||
      !Str(j, "model", s.model, problem) || !Int(j, "memory_total", s.memory_total, problem) ||
      !Int(j, "memory_used", s.memory_used, problem) ||
      !Int(j, "util_gpu", util, problem, 0, 100)) {
    return problem;
  }
  s.index = static_cast<int>(index);
  s.util_gpu = static_cast<int>(util);
  auto mig = j.find("mig");
  s.mig = mig != j.end() && mig->is_boolean() && mig->get<bool>();
  r.devices.push_back(std::move(s));
  return "";
}

std::string Mig(const Json& j, double t, Recording& r) {
  MigSample s;
  s.t = t;
  std::string problem;
  int64_t instance = 0;
  if (!Str(j, "parent_uuid", s.parent_uuid, problem) || !Str(j, "uuid", s.uuid, problem) ||
      !Int(j, "gpu_instance_id", instance, problem, 0, 1 << 20) ||
      !Str(j, "profile", s.profile, problem) || !Int(j, "memory_total", s.memory_total, problem) ||
      !Int(j, "memory_used", s.memory_used, problem)) {
    return problem;
  }
  s.gpu_instance_id = static_cast<int>(instance);
  r.migs.push_back(std::move(s));
  return "";
}

std::string Process(const Json& j, double t, Recording& r) {
  ProcessSample s;
  s.t = t;
  std::string problem;
  if (!Str(j, "uuid", s.uuid, problem) || !Int(j, "pid", s.pid, problem, 1, INT32_MAX) ||
      !Int(j, "used_memory", s.used_memory, problem)) {
    return problem;
  }
  auto gi = j.find("gpu_instance_id");
  if (gi != j.end() && gi->is_number_integer()) {
    s.gpu_instance_id = gi->get<int>();
  } else if (gi != j.end() && !gi->is_null()) {
    return "\"gpu_instance_id\" must be an integer or null";
  }
  r.processes.push_back(std::move(s));
  return "";
}

std::string ProcessUtil(const Json& j, double t, Recording& r) {
  ProcessUtilSample s;
  s.t = t;
  std::string problem;
  int64_t sm = 0, mem = 0;
  if (!Str(j, "uuid", s.uuid, problem) || !Int(j, "pid", s.pid, problem, 1, INT32_MAX) ||
      !Int(j, "ts_us", s.ts_us, problem) || !Int(j, "sm", sm, problem, 0, 100) ||
      !Int(j, "mem", mem, problem, 0, 100)) {
    return problem;
  }
  s.sm = static_cast<int>(sm);
  s.mem = static_cast<int>(mem);
  r.process_utils.push_back(std::move(s));
  return "";
}

// One line: adds its sample to `r` and sets `t`, or returns the problem.
std::string Line(const std::string& line, Recording& r, double& t) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return "not a JSON object";
  std::string problem, type;
  if (!Num(j, "t", t, problem) || !Str(j, "type", type, problem)) return problem;
  if (type == "device") return Device(j, t, r);
  if (type == "mig") return Mig(j, t, r);
  if (type == "process") return Process(j, t, r);
  if (type == "process_util") return ProcessUtil(j, t, r);
  return util::Cat("unknown type \"", type, "\" (expected device, mig, process or process_util)");
}

}  // namespace

Recording ParseRecording(const std::string& text, const std::string& name) {
  Recording r;
  bool any = false;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    double t = 0;
    if (std::string problem = Line(line, r, t); !problem.empty()) {
      r.problems.push_back(util::Cat(name, ":", line_no, ": line skipped: ", problem));
      continue;
    }
    r.first_t = any ? std::min(r.first_t, t) : t;
    r.last_t = any ? std::max(r.last_t, t) : t;
    any = true;
  }
  return r;
}

absl::StatusOr<Recording> ReadRecording(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseRecording(*text, path);
}

std::string ToJsonLine(const DeviceSample& s) {
  Json j = {{"t", s.t},
            {"type", "device"},
            {"uuid", s.uuid},
            {"index", s.index},
            {"model", s.model},
            {"memory_total", s.memory_total},
            {"memory_used", s.memory_used},
            {"util_gpu", s.util_gpu},
            {"mig", s.mig}};
  return j.dump();
}

std::string ToJsonLine(const MigSample& s) {
  Json j = {{"t", s.t},
            {"type", "mig"},
            {"parent_uuid", s.parent_uuid},
            {"uuid", s.uuid},
            {"gpu_instance_id", s.gpu_instance_id},
            {"profile", s.profile},
            {"memory_total", s.memory_total},
            {"memory_used", s.memory_used}};
  return j.dump();
}

std::string ToJsonLine(const ProcessSample& s) {
  Json j = {{"t", s.t},
            {"type", "process"},
            {"uuid", s.uuid},
            {"pid", s.pid},
            {"used_memory", s.used_memory},
            {"gpu_instance_id", s.gpu_instance_id ? Json(*s.gpu_instance_id) : Json(nullptr)}};
  return j.dump();
}

std::string ToJsonLine(const ProcessUtilSample& s) {
  Json j = {{"t", s.t},     {"type", "process_util"}, {"uuid", s.uuid},
            {"pid", s.pid}, {"ts_us", s.ts_us},       {"sm", s.sm},
            {"mem", s.mem}};
  return j.dump();
}

}  // namespace gpuplane::acct
