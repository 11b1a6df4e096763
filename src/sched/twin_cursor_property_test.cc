// Twin cursor property test: on 3,000 random small clusters (Nodes with little CPU and few
// pods allowed, CSINode volume limits, a taint) and pods of a few shapes placed in one pass
// (template pods asking CPU, CSI volumes, ReadWriteOncePod claims, host ports, a node selector,
// a toleration, pod anti-affinity or a topology spread, which placements can undo), every pod gets
// the same decision and node with Session::Cursor as without it (every pod searching every node),
// and nothing the cursor skips changes the outcome; so do pods decided one at a time with pods
// ending in between, as the simulator decides them. Some pods are bound already.
#include <random>

#include "api/loader.h"
#include "api/testing.h"
#include "gtest/gtest.h"
#include "sched/pass.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

using api::testing::Rand;

constexpr char kCommon[] = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: t}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
)";

std::string Node(Rand& r, int n) {
  std::string name = util::Cat("n", n);
  std::string out =
      util::Cat("---\napiVersion: v1\nkind: Node\nmetadata: {name: ", name,
                ", labels: {kubernetes.io/hostname: ", name, ", zone: z", r.Int(0, 1), "}}\n");
  if (r.Chance(0.2)) out += "spec: {taints: [{key: dedicated, value: x, effect: NoSchedule}]}\n";
  out += util::Cat("status: {allocatable: {cpu: \"", r.Int(2, 8), "\", memory: 64Gi, pods: \"",
                   r.Int(2, 6), "\"}}\n");
  std::string devices;
  for (int i = 0, gpus = r.Int(1, 4); i < gpus; ++i) devices += util::Cat("{name: gpu-", i, "}, ");
  out +=
      util::Cat("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", name,
                "}\nspec:\n  driver: gpu.nvidia.com\n  pool: {name: ", name,
                ", generation: 1, resourceSliceCount: 1}\n  nodeName: ", name, "\n  devices: [",
                devices.substr(0, devices.size() - 2), "]\n");
  if (r.Chance(0.7)) {
    out += util::Cat("---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: ", name,
                     "}\nspec: {drivers: [{name: ebs.csi.aws.com, nodeID: ", name,
                     ", allocatable: {count: ", r.Int(0, 3), "}}]}\n");
  }
  return out;
}

// The claim data<v>, bound to a volume of its own with access mode `mode`: a CSI volume, or
// for ReadWriteOncePod an NFS share (so that only the claims tell such pods apart).
std::string Volume(int v, const std::string& mode = "ReadWriteOnce") {
  std::string source = mode == "ReadWriteOncePod"
                           ? util::Cat("nfs: {server: nfs.example.com, path: /v", v, "}")
                           : util::Cat("csi: {driver: ebs.csi.aws.com, volumeHandle: vol-", v, "}");
  return util::Cat("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv", v,
                   "}\nspec:\n  claimRef: {namespace: t, name: data", v,
                   "}\n  capacity: {storage: 1Gi}\n  accessModes: [", mode, "]\n  ", source,
                   "\nstatus: {phase: Bound}\n---\napiVersion: v1\nkind: "
                   "PersistentVolumeClaim\nmetadata: {name: data",
                   v, ", namespace: t}\nspec:\n  accessModes: [", mode,
                   "]\n  storageClassName: \"\"\n  volumeName: pv", v,
                   "\n  resources: {requests: {storage: 1Gi}}\nstatus: {phase: Bound}\n");
}

// A pod of shape `shape` (pods of one shape are twins unless they have volumes of their own).
std::string Pod(Rand& r, int i, int shape, int nodes, int& volumes, std::string& extra) {
  std::string spec = "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]\n";
  std::string labels = util::Cat("{app: s", shape, "}");
  std::string resources = "{claims: [{name: gpu}]", ports;
  switch (shape) {
    case 0:  // CPU
      resources += ", requests: {cpu: \"2\"}";
      break;
    case 1:  // a CSI volume of its own
      extra += Volume(volumes);
      spec += util::Cat("  volumes: [{name: d, persistentVolumeClaim: {claimName: data", volumes++,
                        "}}]\n");
      break;
    case 2:  // one CSI volume shared by every pod of the shape
      spec += "  volumes: [{name: d, persistentVolumeClaim: {claimName: shared}}]\n";
      break;
    case 3:  // a host port
      ports = ", ports: [{containerPort: 80, hostPort: 8080}]";
      break;
    case 4:  // tolerates the taint, pinned to a zone
      spec +=
          util::Cat("  tolerations: [{key: dedicated, operator: Exists}]\n  nodeSelector: {zone: z",
                    r.Int(0, 1), "}\n");
      break;
    case 7:  // a ReadWriteOncePod claim of its own, or the one every pod of the shape shares
      if (r.Chance(0.5)) {
        spec += "  volumes: [{name: d, persistentVolumeClaim: {claimName: data1000}}]\n";
      } else {
        extra += Volume(volumes, "ReadWriteOncePod");
        spec += util::Cat("  volumes: [{name: d, persistentVolumeClaim: {claimName: data",
                          volumes++, "}}]\n");
      }
      break;
    case 5:  // no two pods of the shape on one node
      spec +=
          "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
          "[{labelSelector: {matchLabels: {app: s5}}, topologyKey: kubernetes.io/hostname}]}}\n";
      break;
    default:  // spread over zones: placements elsewhere may let a node in again
      spec +=
          "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
          "DoNotSchedule, labelSelector: {matchLabels: {app: s6}}}]\n";
      break;
  }
  if (shape == 0 && r.Chance(0.3)) spec += util::Cat("  nodeName: n", r.Int(0, nodes - 1), "\n");
  return util::Cat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p", i,
                   ", namespace: t, labels: ", labels, "}\nspec:\n", spec,
                   "  containers: [{name: c, resources: ", resources, "}", ports, "}]\n");
}

#ifdef GPUPLANE_SANITIZED
constexpr int kInstances = 300;
#else
constexpr int kInstances = 3000;
#endif

TEST(TwinCursorPropertyTest, EveryPodGetsTheDecisionItGetsWithoutTheCursor) {
  Rand r{std::mt19937(20261206)};
  int skipped_work = 0;
  for (int iter = 0; iter < kInstances; ++iter) {
    int nodes = r.Int(1, 6), pods = r.Int(2, 14), volumes = 0;
    std::string yaml = kCommon, extra;
    yaml +=
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: shared, "
        "namespace: t}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: \"\"\n  "
        "volumeName: pv-shared\n  resources: {requests: {storage: 1Gi}}\nstatus: {phase: "
        "Bound}\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-shared}\n"
        "spec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  csi: {driver: "
        "ebs.csi.aws.com, volumeHandle: vol-shared}\nstatus: {phase: Bound}\n";
    yaml += Volume(1000, "ReadWriteOncePod");  // data1000: every "solo" pod's

    for (int n = 0; n < nodes; ++n) yaml += Node(r, n);
    // Runs of one shape, as a workload's pods come, with other shapes between.
    int shape = r.Int(0, 7);
    for (int i = 0; i < pods; ++i) {
      if (r.Chance(0.25)) shape = r.Int(0, 7);
      yaml += Pod(r, i, shape, nodes, volumes, extra);
    }
    yaml += extra;
    api::LoadResult lr = api::testing::LoadText(yaml);
    ASSERT_EQ(lr.errors(), 0u) << api::testing::Diagnostics(lr) << yaml;
    std::vector<api::SourcedObject> cluster, work;
    for (const api::SourcedObject& o : lr.objects) {
      bool state = std::holds_alternative<api::ResourceSlice>(o.object) ||
                   std::holds_alternative<api::DeviceClass>(o.object) ||
                   std::holds_alternative<api::Node>(o.object);
      (state ? cluster : work).push_back(o);
    }
    // As the simulator decides them: one at a time, pods ending in between.
    std::vector<std::string> sequences[2];
    for (int run = 0; run < 2; ++run) {
      PodSet set = BuildPodSet(work, cluster);
      std::unique_ptr<Snapshot> snap = Snapshot::Build(cluster);
      absl::StatusOr<std::unique_ptr<Session>> session =
          Session::Make(*snap, set, {.verify = true, .twin_cursor = run == 0});
      ASSERT_TRUE(session.ok());
      std::mt19937 ends(static_cast<uint32_t>(iter));
      std::vector<size_t> placed;
      for (size_t i = 0; i < set.pods.size(); ++i) {
        if (!set.pods[i].bound_node.empty()) continue;
        Decision d = (*session)->Decide(i);
        sequences[run].push_back(
            util::Cat(set.pods[i].key, " ", d.status.code == Code::kSuccess, " ", d.node));
        if (d.status.ok()) placed.push_back(i);
        if (!placed.empty() && std::bernoulli_distribution(0.3)(ends)) {
          size_t k = std::uniform_int_distribution<size_t>(0, placed.size() - 1)(ends);
          ASSERT_TRUE((*session)->Evict(placed[k]).ok());
          placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
    }
    ASSERT_EQ(sequences[0], sequences[1]) << "instance " << iter << "\n" << yaml;

    absl::StatusOr<PassResult> with = RunPass(cluster, work, {.verify = true});
    absl::StatusOr<PassResult> without =
        RunPass(cluster, work, {.verify = true, .twin_cursor = false});
    ASSERT_TRUE(with.ok() && without.ok());
    ASSERT_EQ(with->decisions.size(), without->decisions.size());
    for (size_t i = 0; i < with->decisions.size(); ++i) {
      const Decision& a = with->decisions[i];
      const Decision& b = without->decisions[i];
      ASSERT_EQ(a.status.code, b.status.code)
          << "instance " << iter << ", " << with->pods.pods[i].key << ": " << Render(a.status)
          << " | without: " << Render(b.status) << "\n"
          << yaml;
      ASSERT_EQ(a.node, b.node) << "instance " << iter << ", " << with->pods.pods[i].key << "\n"
                                << yaml;
      skipped_work += a.status.ok() ? 0 : 1;
    }
  }
  EXPECT_GT(skipped_work, kInstances / 10);  // the instances leave pods out, not only place
}

}  // namespace
}  // namespace gpuplane::sched
