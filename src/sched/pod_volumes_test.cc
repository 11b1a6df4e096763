#include "sched/pod_volumes.h"

#include <gtest/gtest.h>

#include <string>

#include "api/testing.h"

namespace gpuplane::sched {
namespace {

const std::map<std::string, std::string> kN0 = {{"topology.example.com/node", "n0"}};
const std::map<std::string, std::string> kN1 = {{"topology.example.com/node", "n1"}};

// A pod with one unbound WaitForFirstConsumer claim of class `local` (provisioner
// local.example.com) asking `request` ("" for no storage request), beside `objects`.
struct Fixture {
  api::LoadResult loaded;
  VolumeIndex index;
  PodInfo pod;

  Fixture(const std::string& objects, const std::string& request) {
    std::string resources =
        request.empty() ? "" : "  resources: {requests: {storage: " + request + "}}\n";
    loaded = api::testing::LoadText(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
        "provisioner: local.example.com\nvolumeBindingMode: WaitForFirstConsumer\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: t}\n"
        "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: local\n" +
        resources +
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: t}\nspec:\n"
        "  volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]\n"
        "  containers: [{name: c}]\n" +
        objects);
    for (const api::SourcedObject& o : loaded.objects) {
      index.Add(o.object);
      if (const auto* p = std::get_if<api::Pod>(&o.object)) pod.pod = p;
    }
    if (pod.pod != nullptr) ResolveVolumes(index, "p.yaml:1: ", pod);
  }

  std::optional<Rule> On(const std::map<std::string, std::string>& labels) const {
    return ChooseVolumes({&pod}, "node", labels, {});
  }
};

constexpr char kPublishes[] =
    "---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: local.example.com}\n"
    "spec: {storageCapacity: true}\n";

std::string CapacityFor(const std::string& name, const std::string& node,
                        const std::string& fields) {
  return "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: " + name +
         ", namespace: kube-system}\nstorageClassName: local\nnodeTopology: {matchLabels: "
         "{topology.example.com/node: " +
         node + "}}\n" + fields;
}

TEST(StorageCapacity, ProvisionsOnlyWhereAPublishedCapacityHoldsTheClaim) {
  Fixture f(std::string(kPublishes) + CapacityFor("n0", "n0", "capacity: 100Gi\n") +
                CapacityFor("n1", "n1", "capacity: 99Gi\n"),
            "100Gi");
  ASSERT_EQ(f.loaded.errors(), 0) << api::testing::Diagnostics(f.loaded);
  ASSERT_FALSE(f.pod.problem) << f.pod.problem->message;
  EXPECT_EQ(f.On(kN0), std::nullopt);  // exactly the request: enough
  EXPECT_EQ(f.On(kN1), Rule::kVolumeCapacity);
  EXPECT_EQ(f.On({{"topology.example.com/node", "n2"}}), Rule::kVolumeCapacity);
}

TEST(StorageCapacity, MaximumVolumeSizeDecidesWhenGiven) {
  Fixture f(std::string(kPublishes) +
                CapacityFor("n0", "n0", "capacity: 1Ti\nmaximumVolumeSize: 50Gi\n") +
                CapacityFor("n1", "n1", "maximumVolumeSize: 200Gi\n"),
            "100Gi");
  ASSERT_EQ(f.loaded.errors(), 0) << api::testing::Diagnostics(f.loaded);
  EXPECT_EQ(f.On(kN0), Rule::kVolumeCapacity);
  EXPECT_EQ(f.On(kN1), std::nullopt);
}

TEST(StorageCapacity, NotCheckedUnlessTheDriverPublishesItAndTheClaimAsksForStorage) {
  const std::string none = CapacityFor("n0", "n0", "capacity: 1Gi\n");
  for (const std::string& driver :
       {std::string(),  // no CSIDriver object: the provisioner may not be a CSI driver
        std::string("---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: "
                    "local.example.com}\nspec: {}\n"),
        std::string("---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: "
                    "local.example.com}\nspec: {storageCapacity: false}\n")}) {
    Fixture f(driver + none, "100Gi");
    ASSERT_EQ(f.loaded.errors(), 0) << api::testing::Diagnostics(f.loaded);
    EXPECT_EQ(f.On(kN0), std::nullopt) << driver;
    EXPECT_EQ(f.On(kN1), std::nullopt) << driver;
  }
  Fixture no_request(std::string(kPublishes) + none, "");
  ASSERT_FALSE(no_request.pod.problem);
  EXPECT_EQ(no_request.On(kN1), std::nullopt);
}

TEST(StorageCapacity, AnObjectWithoutNodeTopologyReachesNoNode) {
  Fixture f(std::string(kPublishes) +
                "---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: "
                "all, namespace: kube-system}\nstorageClassName: local\ncapacity: 1Ti\n",
            "1Gi");
  ASSERT_EQ(f.loaded.errors(), 0) << api::testing::Diagnostics(f.loaded);
  EXPECT_EQ(f.On(kN0), Rule::kVolumeCapacity);
}

TEST(StorageCapacity, AFreeVolumeThatFitsIsBoundWithoutIt) {
  Fixture f(std::string(kPublishes) +
                "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec:\n"
                "  capacity: {storage: 200Gi}\n  accessModes: [ReadWriteOnce]\n"
                "  storageClassName: local\n  local: {path: /mnt/disk}\n  nodeAffinity:\n"
                "    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
                "        - {key: topology.example.com/node, operator: In, values: [n1]}\n"
                "status: {phase: Available}\n",
            "100Gi");
  ASSERT_EQ(f.loaded.errors(), 0) << api::testing::Diagnostics(f.loaded);
  EXPECT_EQ(f.On(kN1), std::nullopt);  // the volume there
  EXPECT_EQ(f.On(kN0), Rule::kVolumeCapacity);
}

}  // namespace
}  // namespace gpuplane::sched
