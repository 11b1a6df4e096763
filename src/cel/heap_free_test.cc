// Selector (a) of issue 3 must evaluate without touching the heap. This binary replaces the
// global operator new to count allocations, so it is built only without sanitizers.
#include <atomic>
#include <cstdlib>
#include <new>

#include "cel/device_env.h"
#include "cel/program.h"
#include "gtest/gtest.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace gpuplane::cel {
namespace {

TEST(AllocationTest, DriverAndTypeSelectorDoesNotAllocate) {
  api::Device d;
  d.name = "gpu-0";
  api::DeviceAttribute type;
  type.string_value = "gpu";
  d.attributes["type"] = type;
  api::DeviceAttribute product;
  product.string_value = "NVIDIA H100 80GB HBM3";
  d.attributes["productName"] = product;
  absl::StatusOr<Program> p = Program::Compile(
      "device.driver == \"gpu.nvidia.com\" && device.attributes[\"gpu.nvidia.com\"].type == "
      "\"gpu\"",
      DeviceSelectorOptions());
  ASSERT_TRUE(p.ok()) << p.status();
  DeviceActivation act(DeviceValue("gpu.nvidia.com", d));
  ASSERT_TRUE(p->Evaluate(act).bool_value());  // warm up
  long before = g_allocations.load();
  for (int i = 0; i < 1000; ++i) {
    Value v = p->Evaluate(act);
    ASSERT_TRUE(v.bool_value());
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
}

}  // namespace
}  // namespace gpuplane::cel
