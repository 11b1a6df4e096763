#include "acct/nvml.h"

#include <dlfcn.h>

#include "gtest/gtest.h"

namespace gpuplane::acct {
namespace {

TEST(NvmlTest, MissingLibraryIsReportedNotFatal) {
  absl::StatusOr<std::unique_ptr<NvmlSampler>> s = NvmlSampler::Open("libnvidia-ml-absent.so.1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("NVML not available"), std::string::npos);
}

TEST(NvmlTest, SamplesThroughTheCAbi) {
  absl::StatusOr<std::unique_ptr<NvmlSampler>> s = NvmlSampler::Open(FAKE_NVML_PATH);
  ASSERT_TRUE(s.ok()) << s.status();
  void* lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto set_mode = reinterpret_cast<void (*)(int)>(dlsym(lib, "fake_nvml_set_mode"));
  ASSERT_NE(set_mode, nullptr);
  set_mode(0);
  Recording rec;
  std::map<std::string, int64_t> errors;
  (*s)->Sample(10, rec, errors);
  (*s)->Sample(11, rec, errors);
  ASSERT_EQ(rec.devices.size(), 2u);
  EXPECT_EQ(rec.devices[0].uuid, "GPU-fake-0");
  EXPECT_EQ(rec.devices[0].model, "NVIDIA H200");
  EXPECT_EQ(rec.devices[0].util_gpu, 70);
  EXPECT_EQ(rec.devices[0].memory_used, int64_t{30} << 30);
  ASSERT_EQ(rec.processes.size(), 4u);
  EXPECT_EQ(rec.processes[1].pid, 102);
  EXPECT_FALSE(rec.processes[1].gpu_instance_id.has_value());
  ASSERT_EQ(rec.process_utils.size(), 4u);  // two new samples per pass
  EXPECT_EQ(rec.process_utils[2].ts_us - rec.process_utils[0].ts_us, 1'000'000);
  EXPECT_EQ(rec.process_utils[0].sm, 50);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(rec.first_t, 10);
  EXPECT_EQ(rec.last_t, 11);
  // Errors are counted by kind; sampling goes on.
  set_mode(1);
  (*s)->Sample(12, rec, errors);
  EXPECT_EQ(errors["nvml_not_supported"], 2);  // utilization and process utilization
  EXPECT_EQ(rec.devices.size(), 3u);
  set_mode(2);
  (*s)->Sample(13, rec, errors);
  EXPECT_EQ(errors["nvml_gpu_lost"], 1);
  set_mode(3);
  (*s)->Sample(14, rec, errors);
  EXPECT_EQ(errors["nvml_no_permission"], 1);
  set_mode(0);
  dlclose(lib);
}

}  // namespace
}  // namespace gpuplane::acct
