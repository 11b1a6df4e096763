#include "cel/device_env.h"

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

}  // namespace
}  // namespace gpuplane::cel
