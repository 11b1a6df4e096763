#include "acct/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "acct/nvml_abi.h"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

constexpr nvmlReturn_t kSuccess = 0, kNotSupported = 3, kNoPermission = 4, kNotFound = 6,
                       kInsufficientSize = 7, kGpuIsLost = 15;
constexpr unsigned kNoInstance = 0xFFFFFFFF;

std::string ErrorKind(nvmlReturn_t r) {
  switch (r) {
    case kNotSupported:
      return "nvml_not_supported";
    case kNoPermission:
      return "nvml_no_permission";
    case kGpuIsLost:
      return "nvml_gpu_lost";
    default:
      return "nvml_error";
  }
}

}  // namespace

struct NvmlSampler::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*count)(unsigned*);
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*);
  nvmlReturn_t (*process_utilization)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned*,
                                      unsigned long long);  // NOLINT(google-runtime-int)
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned*, unsigned*);
};

absl::StatusOr<std::unique_ptr<NvmlSampler>> NvmlSampler::Open(const std::string& library) {
  void* h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(
        util::Cat("NVML not available: ", why != nullptr ? why : library));
  }
  std::unique_ptr<NvmlSampler> s(new NvmlSampler());
  s->handle_ = h;
  s->api_ = std::make_unique<Api>();
  Api& a = *s->api_;
  std::string missing;
  auto bind = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, symbol));
    if (fn == nullptr) util::Append(missing, missing.empty() ? "" : ", ", symbol);
  };
  bind(a.init, "nvmlInit_v2");
  bind(a.shutdown, "nvmlShutdown");
  bind(a.count, "nvmlDeviceGetCount_v2");
  bind(a.handle, "nvmlDeviceGetHandleByIndex_v2");
  bind(a.uuid, "nvmlDeviceGetUUID");
  bind(a.name, "nvmlDeviceGetName");
  bind(a.memory, "nvmlDeviceGetMemoryInfo");
  bind(a.utilization, "nvmlDeviceGetUtilizationRates");
  bind(a.processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  bind(a.process_utilization, "nvmlDeviceGetProcessUtilization");
  bind(a.mig_mode, "nvmlDeviceGetMigMode");
  if (!missing.empty()) {
    return absl::UnavailableError(
        util::Cat("NVML not available: ", library, " lacks ", missing, " (driver too old?)"));
  }
  if (nvmlReturn_t r = a.init(); r != kSuccess) {
    return absl::UnavailableError(util::Cat("NVML not available: nvmlInit_v2 returned ", r));
  }
  return s;
}

NvmlSampler::~NvmlSampler() {
  if (api_ && api_->shutdown != nullptr) api_->shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

namespace {

using Errors = std::map<std::string, int64_t>;

// The device's identity, memory, MIG mode and utilization; nullopt when it has no UUID.
std::optional<DeviceSample> ReadDevice(NvmlSampler::Api& a, nvmlDevice_t dev, unsigned index,
                                       double t, Errors& errors) {
  char uuid[96] = {0}, name[96] = {0};
  if (nvmlReturn_t r = a.uuid(dev, uuid, sizeof uuid); r != kSuccess) {
    ++errors[ErrorKind(r)];
    return std::nullopt;
  }
  if (a.name(dev, name, sizeof name) != kSuccess) std::snprintf(name, sizeof name, "unknown");
  DeviceSample d;
  d.t = t;
  d.uuid = uuid;
  d.index = static_cast<int>(index);
  d.model = name;
  nvmlMemory_t mem{};
  if (nvmlReturn_t r = a.memory(dev, &mem); r == kSuccess) {
    d.memory_total = static_cast<int64_t>(mem.total);
    d.memory_used = static_cast<int64_t>(mem.used);
  } else {
    ++errors[ErrorKind(r)];
  }
  unsigned current = 0, pending = 0;
  d.mig = a.mig_mode(dev, &current, &pending) == kSuccess && current == 1;
  nvmlUtilization_t util{};
  if (!d.mig) {  // not supported on MIG-enabled GPUs
    if (nvmlReturn_t r = a.utilization(dev, &util); r == kSuccess) {
      d.util_gpu = static_cast<int>(util.gpu);
    } else {
      ++errors[ErrorKind(r)];
    }
  }
  return d;
}

// Running compute processes (sized by a first call with count 0).
void ReadProcesses(NvmlSampler::Api& a, nvmlDevice_t dev, const DeviceSample& d, Recording& into,
                   Errors& errors) {
  unsigned n = 0;
  nvmlReturn_t r = a.processes(dev, &n, nullptr);
  std::vector<nvmlProcessInfo_t> procs;
  if (r == kInsufficientSize || (r == kSuccess && n > 0)) {
    procs.resize(n + 8);
    n = static_cast<unsigned>(procs.size());
    r = a.processes(dev, &n, procs.data());
    procs.resize(r == kSuccess ? n : 0);
  }
  if (r != kSuccess && r != kInsufficientSize) ++errors[ErrorKind(r)];
  for (const nvmlProcessInfo_t& p : procs) {
    ProcessSample ps{d.t, d.uuid, p.pid, static_cast<int64_t>(p.usedGpuMemory), std::nullopt};
    if (p.gpuInstanceId != kNoInstance) ps.gpu_instance_id = static_cast<int>(p.gpuInstanceId);
    into.processes.push_back(ps);
  }
}

// Per-process utilization samples newer than `seen` (the last seen on this GPU; advanced).
void ReadProcessUtilization(NvmlSampler::Api& a, nvmlDevice_t dev, const DeviceSample& d,
                            uint64_t& seen, Recording& into, Errors& errors) {
  unsigned m = 0;
  nvmlReturn_t r = a.process_utilization(dev, nullptr, &m, seen);
  if (r == kNotFound) return;  // nothing new
  std::vector<nvmlProcessUtilizationSample_t> samples;
  if (r == kInsufficientSize || (r == kSuccess && m > 0)) {
    samples.resize(m + 8);
    m = static_cast<unsigned>(samples.size());
    r = a.process_utilization(dev, samples.data(), &m, seen);
    samples.resize(r == kSuccess ? m : 0);
  }
  if (r != kSuccess && r != kInsufficientSize && r != kNotFound) ++errors[ErrorKind(r)];
  for (const nvmlProcessUtilizationSample_t& s : samples) {
    into.process_utils.push_back(
        ProcessUtilSample{d.t, d.uuid, s.pid, static_cast<int64_t>(s.timeStamp),
                          static_cast<int>(s.smUtil), static_cast<int>(s.memUtil)});
    seen = std::max<uint64_t>(seen, s.timeStamp);
  }
}

}  // namespace

void NvmlSampler::Sample(double t, Recording& into, std::map<std::string, int64_t>& errors) {
  Api& a = *api_;
  unsigned count = 0;
  if (nvmlReturn_t r = a.count(&count); r != kSuccess) {
    ++errors[ErrorKind(r)];
    return;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if (nvmlReturn_t r = a.handle(i, &dev); r != kSuccess) {
      ++errors[ErrorKind(r)];
      continue;
    }
    std::optional<DeviceSample> d = ReadDevice(a, dev, i, t, errors);
    if (!d) continue;
    into.devices.push_back(*d);
    ReadProcesses(a, dev, *d, into, errors);
    if (d->mig) continue;  // no per-process utilization on MIG
    ReadProcessUtilization(a, dev, *d, last_seen_us_[d->uuid], into, errors);
  }
  if (into.first_t == 0 && into.last_t == 0) into.first_t = t;
  into.first_t = std::min(into.first_t, t);
  into.last_t = std::max(into.last_t, t);
}

}  // namespace gpuplane::acct
