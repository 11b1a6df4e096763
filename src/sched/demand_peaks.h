// The daily pattern of a demand, for the opportunistic headroom (docs/SCHEDULING.md): the
// peak of the demand (devices) in each hour, and how much it rose from an hour to the hours
// after it on the last days. Times are seconds from an epoch (1970 in the live scheduler, the
// workload's first midnight in the replay); hours count from it, and a day is 24 of them.
// Plain value; thread-compatible (one writer at a time).
#ifndef GPUPLANE_SCHED_DEMAND_PEAKS_H_
#define GPUPLANE_SCHED_DEMAND_PEAKS_H_

#include <cstdint>
#include <map>

namespace gpuplane::sched {

class DemandPeaks {
 public:
  // The demand seen at `t`: its hour's peak rises to it.
  void Note(double t, double demand);
  // The largest rise, on any of the last `days` days before t's day, from the peak of t's
  // hour to the peak of a later hour within `window` seconds of t (the hour after t's first;
  // an hour not seen counts 0; an hour that falls on t's own date is left out); 0 when none
  // rose. What the coming hours may bring.
  double Rise(double t, double window, int days = 7) const;
  // Forgets the hours before the last `days` days and today.
  void Prune(double t, int days = 7);

  const std::map<int64_t, double>& peaks() const { return peaks_; }  // hour -> peak
  void Set(int64_t hour, double peak) { peaks_[hour] = peak; }

 private:
  double Peak(int64_t hour) const;
  std::map<int64_t, double> peaks_;
};

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_DEMAND_PEAKS_H_
