#include "acct/cgroup.h"

#include "gtest/gtest.h"

namespace gpuplane::acct {
namespace {

constexpr char kUid[] = "0f4a7c5e-1b2d-4e3f-8a9b-0c1d2e3f4a5b";
constexpr char kCid[] = "3b8e0c6d2f1a4e5b9c7d8e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";

struct Shape {
  const char* name;
  std::string cgroup;  // contents of /proc/<pid>/cgroup
  const char* uid;     // expected pod UID, or "" for no pod
  const char* container;
  const char* runtime;
  const char* qos;
};

std::string U(const std::string& uid) {  // the systemd driver's form
  std::string s = uid;
  for (char& c : s) c = c == '-' ? '_' : c;
  return s;
}

// Real-world shapes: cgroup v1 and v2, cgroupfs and systemd drivers, three runtimes, QoS
// levels, private cgroup namespaces, nested clusters, and processes outside any pod.
TEST(CgroupTest, RealWorldShapes) {
  const std::string uid = kUid, cid = kCid, su = U(kUid);
  const Shape shapes[] = {
      {"v2 systemd containerd burstable",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + su +
           ".slice/cri-containerd-" + cid + ".scope\n",
       kUid, kCid, "containerd", "burstable"},
      {"v2 systemd containerd besteffort",
       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + su +
           ".slice/cri-containerd-" + cid + ".scope\n",
       kUid, kCid, "containerd", "besteffort"},
      {"v2 systemd containerd guaranteed",
       "0::/kubepods.slice/kubepods-pod" + su + ".slice/cri-containerd-" + cid + ".scope\n", kUid,
       kCid, "containerd", "guaranteed"},
      {"v2 systemd cri-o",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + su + ".slice/crio-" +
           cid + ".scope\n",
       kUid, kCid, "cri-o", "burstable"},
      {"v2 systemd docker (cri-dockerd)",
       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + su +
           ".slice/docker-" + cid + ".scope\n",
       kUid, kCid, "docker", "besteffort"},
      {"v2 systemd cri-o conmon is not a container",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + su +
           ".slice/crio-conmon-" + cid + ".scope\n",
       kUid, "", "", "burstable"},
      {"v2 cgroupfs burstable", "0::/kubepods/burstable/pod" + uid + "/" + cid + "\n", kUid, kCid,
       "", "burstable"},
      {"v2 cgroupfs guaranteed", "0::/kubepods/pod" + uid + "/" + cid + "\n", kUid, kCid, "",
       "guaranteed"},
      {"v2 cgroupfs besteffort", "0::/kubepods/besteffort/pod" + uid + "/" + cid + "\n", kUid, kCid,
       "", "besteffort"},
      {"v2 containerd without systemd cgroups",
       "0::/kubepods-burstable-pod" + su + ".slice:cri-containerd:" + cid + "\n", kUid, kCid,
       "containerd", "burstable"},
      {"v2 private cgroup namespace, relative path",
       "0::/../../kubepods-burstable-pod" + su + ".slice/cri-containerd-" + cid + ".scope\n", kUid,
       kCid, "containerd", "burstable"},
      {"v2 private namespace, pod level only", "0::/../pod" + uid + "\n", kUid, "", "",
       "guaranteed"},
      {"v2 kind: nested under the node container",
       "0::/system.slice/docker-aaaaaaaaaaaa.scope/kubelet.slice/kubelet-kubepods.slice/"
       "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" +
           su + ".slice/cri-containerd-" + cid + ".scope\n",
       kUid, kCid, "containerd", "besteffort"},
      {"v2 docker-in-docker, cgroupfs",
       "0::/docker/aaaaaaaaaaaaaaaa/kubepods/burstable/pod" + uid + "/" + cid + "\n", kUid, kCid,
       "", "burstable"},
      {"v2 pod sandbox (pause) container",
       "0::/kubepods.slice/kubepods-pod" + su + ".slice/cri-containerd-" + cid + ".scope\n", kUid,
       kCid, "containerd", "guaranteed"},
      {"v1 systemd, many hierarchies",
       "12:hugetlb:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + su +
           ".slice/cri-containerd-" + cid +
           ".scope\n11:memory:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
           su + ".slice/cri-containerd-" + cid + ".scope\n1:name=systemd:/kubepods.slice\n",
       kUid, kCid, "containerd", "burstable"},
      {"v1 cgroupfs docker",
       "11:devices:/kubepods/besteffort/pod" + uid + "/" + cid +
           "\n10:cpu,cpuacct:/kubepods/besteffort/pod" + uid + "/" + cid + "\n",
       kUid, kCid, "", "besteffort"},
      {"v1 with an empty hierarchy first",
       "13:misc:/\n12:rdma:/\n4:cpuset:/kubepods/pod" + uid + "/" + cid + "\n", kUid, kCid, "",
       "guaranteed"},
      {"hybrid v1 + v2: the unified line wins",
       "5:memory:/user.slice\n0::/kubepods/burstable/pod" + uid + "/" + cid + "\n", kUid, kCid, "",
       "burstable"},
      {"upper-case UID normalized",
       "0::/kubepods/burstable/pod0F4A7C5E-1B2D-4E3F-8A9B-0C1D2E3F4A5B/" + cid + "\n", kUid, kCid,
       "", "burstable"},
      {"CRLF line ends", "0::/kubepods/burstable/pod" + uid + "/" + cid + "\r\n", kUid, kCid, "",
       "burstable"},
      {"host process in a system service", "0::/system.slice/nvidia-persistenced.service\n", "", "",
       "", ""},
      {"user session", "0::/user.slice/user-1000.slice/session-3.scope\n", "", "", "", ""},
      {"init", "0::/init.scope\n", "", "", "", ""},
      {"root cgroup", "0::/\n", "", "", "", ""},
      {"a malformed pod UID is not a pod", "0::/kubepods/burstable/pod12345/" + cid + "\n", "", "",
       "", ""},
      {"empty file", "", "", "", "", ""},
      {"garbage", "no colons here\n::\n", "", "", "", ""},
      // Found by the fuzzer: "-pod" before "kubepods" in one component.
      {"fuzz: -pod before kubepods", "0::/-podkubepods.slice/x\n", "", "", "", ""},
  };
  int n = 0;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.name);
    std::optional<CgroupIdentity> id = ParseProcCgroup(s.cgroup);
    ++n;
    if (std::string(s.uid).empty()) {
      EXPECT_FALSE(id.has_value()) << id->path;
      continue;
    }
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(id->pod_uid, s.uid);
    EXPECT_EQ(id->container_id, s.container);
    EXPECT_EQ(id->runtime, s.runtime);
    EXPECT_EQ(id->qos, s.qos);
  }
  EXPECT_GE(n, 20);
}

}  // namespace
}  // namespace gpuplane::acct
