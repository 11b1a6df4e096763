#include "sched/host_ports.h"

#include <gtest/gtest.h>

#include "api/testing.h"

namespace gpuplane::sched {
namespace {

using api::testing::PodSpecOf;

TEST(HostPortsTest, ReadsHostPortsWithTheirDefaults) {
  std::vector<HostPort> ports = HostPortsOf(
      PodSpecOf("  containers:\n"
                "  - {name: a, ports: [{containerPort: 80}, {containerPort: 80, hostPort: 8080}]}\n"
                "  - {name: b, ports: [{containerPort: 53, hostPort: 53, protocol: UDP, "
                "hostIP: 10.0.0.1}]}\n"));
  EXPECT_EQ(ports, (std::vector<HostPort>{{"TCP", "0.0.0.0", 8080}, {"UDP", "10.0.0.1", 53}}));
  // On the host's network every container port is a host port.
  EXPECT_EQ(HostPortsOf(PodSpecOf("  hostNetwork: true\n"
                                  "  containers: [{name: a, ports: [{containerPort: 29500}]}]\n")),
            (std::vector<HostPort>{{"TCP", "0.0.0.0", 29500}}));
  EXPECT_TRUE(HostPortsOf(PodSpecOf("  containers: [{name: a}]\n")).empty());
}

TEST(HostPortsTest, ConflictsNeedPortProtocolAndAnOverlappingAddress) {
  const HostPort any{"TCP", "0.0.0.0", 80}, one{"TCP", "10.0.0.1", 80};
  EXPECT_TRUE(Conflict(any, any));
  EXPECT_TRUE(Conflict(any, one));
  EXPECT_TRUE(Conflict(one, any));
  EXPECT_FALSE(Conflict(one, {"TCP", "10.0.0.2", 80}));
  EXPECT_FALSE(Conflict(any, {"UDP", "0.0.0.0", 80}));
  EXPECT_FALSE(Conflict(any, {"TCP", "0.0.0.0", 81}));
  EXPECT_TRUE(AnyConflict({one, {"UDP", "0.0.0.0", 9}}, {{"UDP", "10.0.0.3", 9}}));
  EXPECT_FALSE(AnyConflict({one}, {}));
}

}  // namespace
}  // namespace gpuplane::sched
