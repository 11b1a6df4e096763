#include "sched/volume_limits.h"

#include "absl/strings/str_split.h"

namespace gpuplane::sched {

void AttachedVolumes::SetMigratedPlugins(const std::string& annotation) {
  migrated_.clear();
  for (absl::string_view plugin : absl::StrSplit(annotation, ',')) {
    if (!plugin.empty()) migrated_.emplace(plugin.data(), plugin.size());
  }
}

void AttachedVolumes::Add(const std::vector<CsiVolume>& volumes) {
  for (const CsiVolume& v : volumes) {
    if (Counts(v) && users_[v.id]++ == 0) ++count_by_driver_[v.driver];
  }
}

void AttachedVolumes::Remove(const std::vector<CsiVolume>& volumes) {
  for (const CsiVolume& v : volumes) {
    if (!Counts(v)) continue;
    auto it = users_.find(v.id);
    if (it == users_.end() || --it->second > 0) continue;
    users_.erase(it);
    auto c = count_by_driver_.find(v.driver);
    if (c != count_by_driver_.end() && --c->second == 0) count_by_driver_.erase(c);
  }
}

void AttachedVolumes::Attach(const CsiVolume& volume) {
  // One user that never leaves: Remove() of pods cannot take it to zero.
  Add({volume});
}

int64_t AttachedVolumes::Count(const std::string& driver) const {
  auto it = count_by_driver_.find(driver);
  return it == count_by_driver_.end() ? 0 : it->second;
}

bool OverVolumeLimits(const std::vector<CsiVolume>& want, const AttachedVolumes& attached,
                      const std::map<std::string, int64_t>& limits) {
  if (limits.empty()) return false;
  // Each driver once, at its first volume in `want`; a pod has few volumes, so the quadratic
  // scans below cost less than building sets (this runs for every node a pod is tried on).
  for (size_t i = 0; i < want.size(); ++i) {
    if (!attached.Counts(want[i])) continue;
    const std::string& driver = want[i].driver;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; ++k) seen = want[k].driver == driver;
    if (seen) continue;
    auto limit = limits.find(driver);
    if (limit == limits.end()) continue;
    int64_t fresh = 0;
    for (size_t j = i; j < want.size(); ++j) {
      if (want[j].driver != driver || !attached.Counts(want[j]) || attached.Has(want[j].id)) {
        continue;
      }
      bool twice = false;
      for (size_t k = i; k < j && !twice; ++k) twice = want[k].id == want[j].id;
      if (!twice) ++fresh;
    }
    if (fresh > 0 && attached.Count(driver) + fresh > limit->second) return true;
  }
  return false;
}

}  // namespace gpuplane::sched
