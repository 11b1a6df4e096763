// Where the agent's samples come from, behind one interface:
// - NvmlSource: live GPUs through the NVML sampler (nvml.h); when NVML cannot be loaded it
//   yields empty passes (the agent reports why_not() once, as error kind nvml_not_available);
// - ReplaySource: a recording, one pass per distinct sample time, in time order;
// - the synthetic sampler: a ReplaySource over MakeSynthetic's recording (synthetic.h).
// A Sampler owns its source (the NVML handle, or the recording it replays) and is called
// from the agent's loop only (not thread-safe); the pass and error counts it fills are the
// caller's.
#ifndef GPUPLANE_ACCT_SAMPLERS_H_
#define GPUPLANE_ACCT_SAMPLERS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "acct/nvml.h"
#include "acct/recording.h"

namespace gpuplane::acct {

using ErrorCounts = std::map<std::string, int64_t>;

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Fills `pass` (cleared first) with one pass of records; live samplers stamp them `now`.
  // Returns false when there is nothing more to sample (the end of a recording).
  virtual bool Next(double now, Recording& pass, ErrorCounts& errors) = 0;
};

class NvmlSource : public Sampler {
 public:
  explicit NvmlSource(const std::string& library = "libnvidia-ml.so.1");
  bool Next(double now, Recording& pass, ErrorCounts& errors) override;
  bool available() const { return nvml_ != nullptr; }
  const std::string& why_not() const { return why_not_; }

 private:
  std::unique_ptr<NvmlSampler> nvml_;
  std::string why_not_;
};

class ReplaySource : public Sampler {
 public:
  explicit ReplaySource(Recording recording);
  bool Next(double now, Recording& pass, ErrorCounts& errors) override;
  // Skips the passes before `t` (a restarted agent resumes where its ledger ends).
  void SkipBefore(double t);
  size_t passes() const { return times_.size(); }

 private:
  Recording rec_;
  std::vector<double> times_;  // distinct sample times, ascending
  size_t next_ = 0;
  size_t cursor_[4] = {0, 0, 0, 0};  // per record kind
};

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_SAMPLERS_H_
