#include "api/names.h"

#include "gtest/gtest.h"

namespace gpuplane::api {
namespace {

TEST(NamesTest, DnsLabel) {
  EXPECT_EQ(CheckDnsLabel("gpu-0"), "");
  EXPECT_EQ(CheckDnsLabel("a"), "");
  EXPECT_NE(CheckDnsLabel(""), "");
  EXPECT_NE(CheckDnsLabel("-a"), "");
  EXPECT_NE(CheckDnsLabel("a-"), "");
  EXPECT_NE(CheckDnsLabel("GPU"), "");
  EXPECT_NE(CheckDnsLabel("a.b"), "");
  EXPECT_EQ(CheckDnsLabel(std::string(63, 'a')), "");
  EXPECT_NE(CheckDnsLabel(std::string(64, 'a')), "");
}

TEST(NamesTest, DnsSubdomainDriverAndPool) {
  EXPECT_EQ(CheckDnsSubdomain("gpu.nvidia.com"), "");
  EXPECT_NE(CheckDnsSubdomain("gpu..nvidia"), "");
  EXPECT_NE(CheckDnsSubdomain("gpu.nvidia.com."), "");
  EXPECT_EQ(CheckDriverName("gpu.nvidia.com"), "");
  EXPECT_NE(CheckDriverName(std::string(30, 'a') + "." + std::string(33, 'b')), "");
  EXPECT_EQ(CheckPoolName("node-a"), "");
  EXPECT_EQ(CheckPoolName("rack-1/node-a.example.com"), "");
  EXPECT_NE(CheckPoolName("rack-1//node"), "");
  EXPECT_NE(CheckPoolName("/node"), "");
}

TEST(NamesTest, LabelKeysAndValues) {
  EXPECT_EQ(CheckLabelKey("app"), "");
  EXPECT_EQ(CheckLabelKey("nvidia.com/gpu.product"), "");
  EXPECT_EQ(CheckLabelKey("kubernetes.io/hostname"), "");
  EXPECT_NE(CheckLabelKey("Bad_Prefix/x"), "");
  EXPECT_NE(CheckLabelKey("a/"), "");
  EXPECT_NE(CheckLabelKey("-x"), "");
  EXPECT_EQ(CheckLabelValue(""), "");
  EXPECT_EQ(CheckLabelValue("NVIDIA-H100-80GB-HBM3"), "");
  EXPECT_NE(CheckLabelValue("a b"), "");
  EXPECT_NE(CheckLabelValue(std::string(64, 'a')), "");
}

TEST(NamesTest, QualifiedNames) {
  EXPECT_EQ(CheckQualifiedName("productName"), "");
  EXPECT_EQ(CheckQualifiedName("gpu.nvidia.com/productName"), "");
  EXPECT_EQ(CheckQualifiedName("resource.kubernetes.io/pcieRoot"), "");
  EXPECT_EQ(CheckQualifiedName("_x1"), "");
  EXPECT_NE(CheckQualifiedName("1x"), "");
  EXPECT_NE(CheckQualifiedName("gpu.nvidia.com/"), "");
  EXPECT_NE(CheckQualifiedName("Gpu.Nvidia/x"), "");
  EXPECT_NE(CheckQualifiedName("a-b"), "");
  EXPECT_NE(CheckQualifiedName(std::string(33, 'a')), "");
  EXPECT_NE(CheckQualifiedName(std::string(64, 'a') + "/x"), "");
}

TEST(NamesTest, Semver) {
  for (const char* ok : {"1.2.3", "0.0.0", "580.82.7", "1.0.0-alpha", "1.0.0-alpha.1",
                         "1.0.0-0.3.7", "1.0.0+build.1", "1.0.0-rc.1+build.5"}) {
    EXPECT_EQ(CheckSemver(ok), "") << ok;
  }
  for (const char* bad : {"1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.3-", "1.2.3-01", "1.2.3+",
                          "v1.2.3", "", "1..3", "1.2.3-a..b"}) {
    EXPECT_NE(CheckSemver(bad), "") << bad;
  }
}

}  // namespace
}  // namespace gpuplane::api
