#include "acct/cgroup.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gpuplane::acct {
namespace {

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// A pod UID: 36 characters, hex digits in groups 8-4-4-4-12 separated by '-' (or '_').
std::optional<std::string> PodUid(std::string_view s) {
  if (s.size() != 36) return std::nullopt;
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    bool sep = i == 8 || i == 13 || i == 18 || i == 23;
    if (sep) {
      if (out[i] != '-' && out[i] != '_') return std::nullopt;
      out[i] = '-';
    } else if (!IsHex(std::string_view(&out[i], 1))) {
      return std::nullopt;
    } else {
      out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
    }
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The container in a path component after the pod's: a scope or a bare id.
void Container(std::string_view c, CgroupIdentity& id) {
  struct Scope {
    std::string_view prefix, runtime;
  };
  const Scope scopes[] = {{"cri-containerd-", "containerd"},
                          {"crio-conmon-", ""},  // CRI-O's monitor process, not a container
                          {"crio-", "cri-o"},
                          {"docker-", "docker"},
                          {"cri-dockerd-", "docker"}};
  if (EndsWith(c, ".scope")) {
    std::string_view body = c.substr(0, c.size() - 6);
    for (const Scope& s : scopes) {
      if (StartsWith(body, s.prefix)) {
        if (s.runtime.empty()) return;
        std::string_view hex = body.substr(s.prefix.size());
        if (IsHex(hex)) {
          id.container_id = std::string(hex);
          id.runtime = std::string(s.runtime);
        }
        return;
      }
    }
    return;
  }
  // cgroupfs: the bare id, or containerd without systemd cgroups ("cri-containerd:<id>").
  size_t colon = c.rfind(':');
  std::string_view hex = colon == std::string_view::npos ? c : c.substr(colon + 1);
  if (IsHex(hex) && hex.size() >= 12) {
    id.container_id = std::string(hex);
    if (colon != std::string_view::npos) {
      std::string_view prefix = c.substr(0, colon);
      id.runtime = prefix.find("containerd") != std::string_view::npos ? "containerd"
                   : prefix.find("crio") != std::string_view::npos     ? "cri-o"
                   : prefix.find("docker") != std::string_view::npos   ? "docker"
                                                                       : "";
    }
  }
}

}  // namespace

std::optional<CgroupIdentity> ParseCgroupPath(std::string_view path) {
  std::vector<std::string_view> parts = Split(path, '/');
  // The last component that names a pod wins (nested clusters repeat the structure).
  for (size_t i = parts.size(); i-- > 0;) {
    std::string_view c = parts[i];
    std::string_view inline_container;  // "<pod>.slice:cri-containerd:<id>" in one component
    if (size_t colon = c.find(".slice:"); colon != std::string_view::npos) {
      inline_container = c.substr(colon + 7);
      c = c.substr(0, colon + 6);
    }
    std::string qos;
    std::optional<std::string> uid;
    if (StartsWith(c, "pod")) {  // cgroupfs: pod<uid>
      uid = PodUid(c.substr(3));
    } else if (c.find("kubepods") != std::string_view::npos && EndsWith(c, ".slice")) {
      // systemd: [kubelet-]kubepods[-<qos>]-pod<uid_>.slice
      std::string_view body = c.substr(0, c.size() - 6);
      size_t at = body.rfind("-pod");
      if (at != std::string_view::npos) {
        std::string_view head = body.substr(0, at);
        size_t k = head.find("kubepods");  // must come before "-pod<uid>"
        if (k != std::string_view::npos) {
          uid = PodUid(body.substr(at + 4));
          std::string_view rest = head.substr(k + 8);  // "" or "-<qos>"
          if (rest.size() > 1) qos = std::string(rest.substr(1));
        }
      }
    }
    if (!uid) continue;
    CgroupIdentity id;
    id.pod_uid = *uid;
    id.path = std::string(path);
    if (qos.empty() && i > 0) {
      std::string_view parent = parts[i - 1];
      if (parent == "burstable" || parent == "besteffort") qos = std::string(parent);
    }
    id.qos = qos.empty() ? "guaranteed" : qos;
    if (!inline_container.empty()) {
      Container(inline_container, id);
    } else if (i + 1 < parts.size()) {
      Container(parts[i + 1], id);
    }
    return id;
  }
  return std::nullopt;
}

std::optional<CgroupIdentity> ParseProcCgroup(std::string_view contents) {
  std::vector<std::string_view> lines = Split(contents, '\n');
  // cgroup v2's unified line ("0::") first, then the v1 hierarchies in order.
  std::stable_sort(lines.begin(), lines.end(), [](std::string_view a, std::string_view b) {
    return StartsWith(a, "0::") && !StartsWith(b, "0::");
  });
  for (std::string_view line : lines) {
    size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    while (!path.empty() && (path.back() == '\r' || path.back() == ' ')) path.remove_suffix(1);
    if (std::optional<CgroupIdentity> id = ParseCgroupPath(path)) return id;
  }
  return std::nullopt;
}

}  // namespace gpuplane::acct
