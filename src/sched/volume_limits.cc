#include "sched/volume_limits.h"

#include <set>

namespace gpuplane::sched {

void AttachedVolumes::Add(const std::vector<CsiVolume>& volumes) {
  for (const CsiVolume& v : volumes) {
    if (users_[v.id]++ == 0) ++count_by_driver_[v.driver];
  }
}

void AttachedVolumes::Remove(const std::vector<CsiVolume>& volumes) {
  for (const CsiVolume& v : volumes) {
    auto it = users_.find(v.id);
    if (it == users_.end() || --it->second > 0) continue;
    users_.erase(it);
    auto c = count_by_driver_.find(v.driver);
    if (c != count_by_driver_.end() && --c->second == 0) count_by_driver_.erase(c);
  }
}

int64_t AttachedVolumes::Count(const std::string& driver) const {
  auto it = count_by_driver_.find(driver);
  return it == count_by_driver_.end() ? 0 : it->second;
}

bool OverVolumeLimits(const std::vector<CsiVolume>& want, const AttachedVolumes& attached,
                      const std::map<std::string, int64_t>& limits) {
  if (limits.empty()) return false;
  std::map<std::string, int64_t> fresh;  // new volumes per limited driver
  std::set<std::string> seen;
  for (const CsiVolume& v : want) {
    if (!limits.contains(v.driver) || attached.Has(v.id) || !seen.insert(v.id).second) continue;
    ++fresh[v.driver];
  }
  for (const auto& [driver, n] : fresh) {
    if (attached.Count(driver) + n > limits.at(driver)) return true;
  }
  return false;
}

}  // namespace gpuplane::sched
