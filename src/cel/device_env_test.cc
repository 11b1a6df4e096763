#include "cel/device_env.h"

#include <map>
#include <random>

#include "cel/testing.h"

namespace gpuplane::cel {
namespace {

api::Device H100() {
  api::Device d;
  d.name = "gpu-0";
  auto str = [](const char* s) {
    api::DeviceAttribute a;
    a.string_value = s;
    return a;
  };
  d.attributes["type"] = str("gpu");
  d.attributes["productName"] = str("NVIDIA H100 80GB HBM3");
  api::DeviceAttribute ver;
  ver.version_value = "550.54.15";
  d.attributes["driverVersion"] = ver;
  api::DeviceAttribute index;
  index.int_value = 3;
  d.attributes["gpu.nvidia.com/index"] = index;
  d.attributes["resource.kubernetes.io/pcieRoot"] = str("pci0000:10");
  d.capacity["memory"] = api::DeviceCapacity{*api::Quantity::Parse("80Gi"), std::nullopt};
  return d;
}

TEST(DeviceEnvTest, SelectorsSeeTheDeviceAsKubernetesDoes) {
  DeviceActivation act(DeviceValue("gpu.nvidia.com", H100()));
  CompileOptions options = DeviceSelectorOptions();
  for (const testing::Case& c : std::initializer_list<testing::Case>{
           {"device.driver == 'gpu.nvidia.com'", "true"},
           {"device.attributes['gpu.nvidia.com'].type == 'gpu'", "true"},
           {"device.attributes['gpu.nvidia.com'].index", "3"},
           {"device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100') && "
            "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
            "true"},
           {"device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))",
            "true"},
           {"device.attributes['resource.kubernetes.io'].pcieRoot", "'pci0000:10'"},
           {"device.attributes['other.example.com'].size()", "0"},
           {"device.attributes['gpu.nvidia.com'].missing", "error: no such key: missing"},
           {"has(device.attributes['gpu.nvidia.com'].missing)", "false"},
           {"has(device.attributes['gpu.nvidia.com'].type)", "true"},
           {"device.attributes['gpu.nvidia.com'].?missing.orValue('x')", "'x'"},
           {"'missing' in device.attributes['gpu.nvidia.com']", "false"},
           {"device.attributes['other.example.com'].?x.hasValue()", "false"},
           {"device.allowMultipleAllocations", "false"},
           {"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('79Gi'))", "true"},
       }) {
    testing::ExpectCase(c, act, options);
  }
}

TEST(DeviceEnvTest, CompileErrorsForUnknownNames) {
  CompileOptions options = DeviceSelectorOptions();
  absl::StatusOr<Program> p = Program::Compile("node.name == 'x'", options);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "ERROR: <input>:1:1: undeclared reference to 'node'\n | node.name == 'x'\n | ^");
  p = Program::Compile("device.driver.frobnicate()", options);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("undeclared reference to 'frobnicate'"), std::string::npos);
  EXPECT_TRUE(Program::Compile("device.attributes.exists(d, d == 'x')", options).ok());
}

// Random devices over a few drivers, keys and values, so many devices are alike for a selector
// and qualified and unqualified spellings of one attribute meet.
api::Device RandomDevice(std::mt19937& rng, int i) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  api::Device d;
  d.name = "dev-" + std::to_string(i);
  const char* const keys[] = {"productName",
                              "gpu.nvidia.com/productName",
                              "index",
                              "type",
                              "resource.kubernetes.io/pcieRoot",
                              "x.example/mode",
                              "a/b/c",
                              "driverVersion"};
  for (const char* k : keys) {
    if (pick(3) == 0) continue;
    api::DeviceAttribute a;
    switch (pick(4)) {
      case 0:
        a.int_value = pick(3);
        break;
      case 1:
        a.bool_value = pick(2) == 0;
        break;
      case 2:
        a.string_value = pick(2) == 0 ? "NVIDIA H100" : "nvidia a100";
        break;
      default:
        a.version_value = pick(2) == 0 ? "550.54.15" : "not-a-version";
        break;
    }
    d.attributes[k] = a;
  }
  const char* const caps[] = {"memory", "gpu.nvidia.com/memory", "x.example/cores"};
  const char* const quantities[] = {"40Gi", "80Gi", "81920Mi", "8"};
  for (const char* c : caps) {
    if (pick(2) == 0) continue;
    d.capacity[c] = api::DeviceCapacity{*api::Quantity::Parse(quantities[pick(4)]), std::nullopt};
  }
  if (pick(3) != 0) d.allow_multiple_allocations = pick(2) == 0;
  return d;
}

// Equal read keys must mean equal results (value, or error either way) and equal cost: the
// property alloc::SelectorMemo relies on to share one evaluation between devices.
TEST(DeviceEnvTest, DevicesWithEqualReadKeysGiveEqualResults) {
  std::mt19937 rng(7);
  std::vector<std::pair<std::string, api::Device>> devices;
  devices.reserve(400);
  for (int i = 0; i < 400; ++i) {
    devices.emplace_back(i % 3 == 0 ? "x.example" : "gpu.nvidia.com", RandomDevice(rng, i));
  }
  const CompileOptions options = DeviceSelectorOptions();
  int shared = 0;
  const std::string product_and_memory =
      std::string("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100' && ") +
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0";
  for (const char* source : {
           "device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100')",
           product_and_memory.c_str(),
           "has(device.attributes['gpu.nvidia.com'].index) && device.driver == 'gpu.nvidia.com'",
           "device.attributes['x.example'].?mode.orValue(false) == true",
           "device.attributes['a'].?b.hasValue() || device.attributes['a']['b/c'] == 1",
           "device.attributes['resource.kubernetes.io'].pcieRoot.size() > 3",
           "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('1.0.0'))",
           "device.capacity['x.example'].cores.isInteger() || device.allowMultipleAllocations",
           "device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')",
           "[1, 2].exists(x, x == device.attributes['gpu.nvidia.com'].index)",
           "device.attributes['gpu.nvidia.com'].type",
       }) {
    SCOPED_TRACE(source);
    absl::StatusOr<Program> p = Program::Compile(source, options);
    ASSERT_TRUE(p.ok()) << p.status();
    std::optional<std::vector<DeviceRead>> reads = DeviceReads(*p);
    ASSERT_TRUE(reads.has_value());
    std::map<std::string, std::pair<Value, int64_t>> by_key;
    for (const auto& [driver, d] : devices) {
      int64_t cost = 0;
      Value v = p->Evaluate(DeviceActivation(DeviceValue(driver, d)), kDefaultCostLimit, &cost);
      std::string key;
      AppendDeviceReadKey(driver, d, *reads, &key);
      auto [it, inserted] = by_key.try_emplace(key, v, cost);
      if (inserted) continue;
      ++shared;
      const auto& [first, first_cost] = it->second;
      EXPECT_EQ(first.is_error(), v.is_error()) << d.name << ": " << v.str();
      if (!first.is_error() && !v.is_error()) {
        EXPECT_TRUE(Equal(first, v)) << d.name;
      }
      EXPECT_EQ(first_cost, cost) << d.name;
    }
  }
  EXPECT_GT(shared, 2000);  // the devices are alike often enough to test something
}

TEST(DeviceEnvTest, DeviceReadsListsConstantPathsOnly) {
  const CompileOptions options = DeviceSelectorOptions();
  auto reads = [&](const char* source) { return DeviceReads(*Program::Compile(source, options)); };
  using F = DeviceRead::Field;
  EXPECT_EQ(*reads("device.attributes['d.io'].a == 1 && has(device.capacity['d.io'].m) && "
                   "device.driver == 'd.io' && device.attributes['d.io'].a > 0"),
            (std::vector<DeviceRead>{
                {F::kAttribute, "d.io", "a"}, {F::kCapacity, "d.io", "m"}, {F::kDriver, "", ""}}));
  EXPECT_EQ(*reads("device.allowMultipleAllocations"),
            (std::vector<DeviceRead>{{F::kAllowMultiple, "", ""}}));
  EXPECT_EQ(*reads("true"), std::vector<DeviceRead>{});
  // Whatever reads more than fixed paths is evaluated on every device.
  EXPECT_FALSE(reads("device.attributes[device.driver].a == 1"));
  EXPECT_FALSE(reads("device.attributes['d.io'].size() == 2"));
  EXPECT_FALSE(reads("'a' in device.attributes['d.io']"));
  EXPECT_FALSE(reads("device.attributes.exists(d, d == 'x')"));
  EXPECT_FALSE(reads("[1].exists(device, device == 1)"));
}

}  // namespace
}  // namespace gpuplane::cel
