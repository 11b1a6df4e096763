#include "cel/program.h"

#include <thread>
#include <vector>

#include "cel/device_env.h"
#include "gtest/gtest.h"

namespace gpuplane::cel {
namespace {

TEST(ProgramTest, OneProgramEvaluatesFromSeveralThreads) {
  absl::StatusOr<Program> p = Program::Compile(
      "device.attributes['gpu.nvidia.com'].index % 2 == 0 && "
      "device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100') && "
      "['a', 'b'].map(x, x + string(device.attributes['gpu.nvidia.com'].index)).size() == 2",
      DeviceSelectorOptions());
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<Value> devices;
  for (int i = 0; i < 64; ++i) {
    api::Device d;
    d.name = "gpu-" + std::to_string(i);
    api::DeviceAttribute index;
    index.int_value = i;
    d.attributes["index"] = index;
    api::DeviceAttribute product;
    product.string_value = "NVIDIA H100 80GB HBM3";
    d.attributes["productName"] = product;
    devices.push_back(DeviceValue("gpu.nvidia.com", d));
  }
  const Program& program = *p;
  std::vector<std::vector<int>> matches(4);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < 64; ++i) {
          Value v = program.Evaluate(DeviceActivation(devices[static_cast<size_t>(i)]));
          if (round == 0 && v.kind() == Kind::kBool && v.bool_value()) matches[t].push_back(i);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::vector<int>& m : matches) {
    ASSERT_EQ(m.size(), 32u);
    EXPECT_EQ(m, matches[0]);
  }
}

TEST(ProgramTest, ErrorsAreValuesAndAbsorbedCommutatively) {
  MapActivation act;
  auto run = [&](const char* e) { return Program::Compile(e, {})->Evaluate(act); };
  EXPECT_FALSE(run("1 / 0 == 1 && false").bool_value());
  EXPECT_FALSE(run("false && 1 / 0 == 1").bool_value());
  EXPECT_TRUE(run("1 / 0 == 1 || true").bool_value());
  EXPECT_TRUE(run("true || 1 / 0 == 1").bool_value());
  EXPECT_TRUE(run("1 / 0 == 1 && true").is_error());
  EXPECT_EQ(run("[1, 2][5]").str(), "index out of bounds: 5");
  EXPECT_EQ(run("{'a': 1}['b']").str(), "no such key: b");
}

}  // namespace
}  // namespace gpuplane::cel
