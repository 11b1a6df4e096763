#include "acct/genai.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "util/strings.h"

namespace gpuplane::acct {
namespace {

// An octal tar header number (NUL- or space-terminated).
bool Octal(const char* p, size_t n, uint64_t& out) {
  out = 0;
  size_t i = 0;
  while (i < n && p[i] == ' ') ++i;
  bool any = false;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (out > (uint64_t{1} << 60)) return false;
    out = out * 8 + static_cast<uint64_t>(p[i] - '0');
    any = true;
  }
  return any && (i == n || p[i] == '\0' || p[i] == ' ');
}

// Splits a CSV line into fields (no quoting in these files).
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool Number(std::string_view s, double& out) {
  if (s.empty() || s.size() > 64) return false;
  std::string copy(s);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(out);
}

// container_ip -> (timestamp -> value), from a CSV whose header names the columns.
std::map<std::string, std::map<double, double>> Series(const std::string& csv, size_t* bad) {
  std::map<std::string, std::map<double, double>> out;
  int value_col = -1, time_col = -1, id_col = -1;
  size_t pos = 0;
  bool header = true;
  while (pos < csv.size()) {
    size_t nl = csv.find('\n', pos);
    std::string_view line(csv.data() + pos, (nl == std::string::npos ? csv.size() : nl) - pos);
    pos = nl == std::string::npos ? csv.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> f = Fields(line);
    if (header) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "value") value_col = static_cast<int>(i);
        if (f[i] == "timestamp_anon") time_col = static_cast<int>(i);
        if (f[i] == "container_ip") id_col = static_cast<int>(i);
      }
      header = false;
      if (value_col < 0 || time_col < 0 || id_col < 0) {
        ++*bad;
        return out;
      }
      continue;
    }
    double t = 0, v = 0;
    if (f.size() != 3 || !Number(f[time_col], t) || !Number(f[value_col], v) || f[id_col].empty()) {
      ++*bad;
      continue;
    }
    out[std::string(f[id_col])][t] = v;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseTar(const std::string& bytes,
                                                            const std::string& name) {
  std::map<std::string, std::string> files;
  size_t off = 0;
  while (off + 512 <= bytes.size()) {
    const char* h = bytes.data() + off;
    if (std::all_of(h, h + 512, [](char c) { return c == '\0'; })) return files;  // end
    uint64_t size = 0;
    if (!Octal(h + 124, 12, size)) {
      return absl::InvalidArgumentError(
          util::Cat(name, ": corrupt tar header at byte ", off, " (size field)"));
    }
    std::string member(h, strnlen(h, 100));
    if (std::string_view(h + 257, 5) == "ustar") {
      std::string prefix(h + 345, strnlen(h + 345, 155));
      if (!prefix.empty()) member = util::Cat(prefix, "/", member);
    }
    off += 512;
    if (size > bytes.size() - off) {
      return absl::InvalidArgumentError(
          util::Cat(name, ": truncated tar archive: ", member, " needs ", size, " bytes"));
    }
    char type = h[156];
    if (type == '0' || type == '\0') files[member] = bytes.substr(off, size);
    off += (size + 511) / 512 * 512;
  }
  if (off != bytes.size()) {
    return absl::InvalidArgumentError(util::Cat(name, ": truncated tar archive at byte ", off));
  }
  return files;
}

absl::StatusOr<std::string> ReadGzip(const std::string& path, size_t limit) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(util::Cat(path, ": cannot open"));
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) {
      gzclose(f);
      return absl::InvalidArgumentError(util::Cat(path, ": more than ", limit, " bytes"));
    }
  }
  int err = 0;
  std::string message = n < 0 ? gzerror(f, &err) : "";
  gzclose(f);
  if (n < 0) return absl::InvalidArgumentError(util::Cat(path, ": not gzip: ", message));
  return out;
}

std::vector<UsageProfile> JoinGenaiCsv(const std::string& duty_csv, const std::string& memory_csv,
                                       size_t min_samples, size_t* bad_rows) {
  size_t bad = 0;
  auto duty = Series(duty_csv, &bad);
  auto memory = Series(memory_csv, &bad);
  if (bad_rows != nullptr) *bad_rows = bad;
  std::vector<UsageProfile> out;
  for (const auto& [id, d] : duty) {
    auto m = memory.find(id);
    if (m == memory.end() || d.size() < min_samples || m->second.size() < min_samples) continue;
    UsageProfile p;
    p.id = id;
    for (const auto& [t, v] : d) {
      // Memory at this time: the latest sample at or before it (or the first one).
      auto it = m->second.upper_bound(t);
      if (it != m->second.begin()) --it;
      p.duty.push_back(std::clamp(v / 100, 0.0, 1.0));
      p.memory.push_back(std::max(0.0, it->second));
    }
    out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<std::vector<UsageProfile>> LoadGenaiProfiles(const std::string& dir,
                                                            size_t min_samples) {
  std::string csv[2];
  const char* names[2] = {"pod_gpu_duty_cycle_anon", "pod_gpu_memory_used_bytes_anon"};
  for (int i = 0; i < 2; ++i) {
    std::string path = util::Cat(dir, "/", names[i], ".tar.gz");
    if (!std::filesystem::exists(path)) {
      return absl::NotFoundError(util::Cat(path, " is absent"));
    }
    absl::StatusOr<std::string> tar = ReadGzip(path);
    if (!tar.ok()) return tar.status();
    absl::StatusOr<std::map<std::string, std::string>> files = ParseTar(*tar, path);
    if (!files.ok()) return files.status();
    auto it = files->find(util::Cat(names[i], ".csv"));
    if (it == files->end()) {
      return absl::InvalidArgumentError(util::Cat(path, ": no ", names[i], ".csv inside"));
    }
    csv[i] = std::move(it->second);
  }
  std::vector<UsageProfile> profiles = JoinGenaiCsv(csv[0], csv[1], min_samples, nullptr);
  if (profiles.empty()) {
    return absl::InvalidArgumentError(
        util::Cat(dir, ": no pod has ", min_samples, " samples in both series"));
  }
  return profiles;
}

}  // namespace gpuplane::acct
