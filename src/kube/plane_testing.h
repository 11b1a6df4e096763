// Test support for the live scheduler against a real control plane (GPUPLANE_TEST_PLANE, set by
// scripts/e2e.sh; tests skip without it): a fixture with its own namespace, DeviceClass
// (driver), scheduler name, nodes with GPUs published as ResourceSlices, claims and pods, and
// `gpuplane scheduler` processes (GPUPLANE_BIN) to start and kill. The invariants the crash
// tests check are read from the API, not from any cache.
// Ownership: the fixture owns its Client, scheduler thread and child processes (killed in
// TearDown). Not thread-safe; test-only.
#ifndef GPUPLANE_KUBE_PLANE_TESTING_H_
#define GPUPLANE_KUBE_PLANE_TESTING_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "kube/client.h"
#include "kube/scheduler.h"

namespace gpuplane::kube {

// Waits up to `seconds` for `done`, asking every 5 ms.
bool Eventually(const std::function<bool()>& done, double seconds = 30);

// Restarts the plane's kube-apiserver (`scripts/controlplane.sh restart-apiserver DIR`: it
// returns once the server is ready again).
absl::Status RestartApiServer(const std::string& dir);

// Returns once kube-controller-manager makes claims from templates: a pod of `ns` with a
// one-claim template gets its claim (then both are deleted), or DeadlineExceeded after 180 s.
// A test that restarts the API server calls it before it ends: the controller manager's
// watches resume after client-go's reflector backoff (0.8 s doubling to 30 s, jittered up to
// 60 s, reset only after 2 minutes without a failure: v0.35.4 tools/cache/reflector.go), so
// after restarts in quick succession it saw new pods 15-107 s later on this machine, and the
// tests after the restart timed out waiting for their claims.
absl::Status AwaitClaimController(const Client& client, const std::string& ns);

class SchedulerPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  void Create(const std::string& path, const nlohmann::json& obj);
  // A node with `gpus` devices of `model` (H100: 80Gi, else 40Gi) in one ResourceSlice; both
  // deleted when the test ends.
  std::string Node(const std::string& suffix, const std::string& model, int gpus,
                   const nlohmann::json& labels = nlohmann::json::object());
  nlohmann::json ClaimSpec(int count, const std::string& cel) const;
  // Creates the ResourceClaimTemplate `one` (one device of the test's class) and returns the
  // spec.resourceClaims entry (named gpu) that uses it.
  nlohmann::json OneGpuTemplate();
  // A ResourceClaim of `count` devices, labelled with its gang (for GangViolation).
  void Claim(const std::string& name, int count, const std::string& gang = "");
  // A pod of this scheduler using one claim (`claim_ref`: a spec.resourceClaims entry named
  // gpu), with `extra_spec` merged into its spec and `labels`.
  void Pod(const std::string& name, const nlohmann::json& claim_ref,
           const nlohmann::json& extra_spec = nlohmann::json::object(),
           const nlohmann::json& labels = nlohmann::json::object());
  void Workload(const std::string& name, int min_count);
  // A DeviceClass ext-<id> for the test's devices serving the extended resource it returns
  // (example.com/gpu-<id>), and a pod of this scheduler asking `gpus` of that resource, with
  // `extra_spec` merged into its spec.
  std::string ExtendedResourceClass();
  void ExtendedResourcePod(const std::string& name, int gpus,
                           const nlohmann::json& extra_spec = nlohmann::json::object());
  // A ValidatingAdmissionPolicy `name` bound to the test's namespace: updates of its
  // ResourceClaims for which the CEL expression `allowed` (on `object`) is false are refused;
  // returns once the API server enforces it (an update of the claim `probe`, which the policy
  // must refuse, is refused). Returns the paths that delete the policy and its binding.
  std::vector<std::string> RefuseClaimUpdates(const std::string& name, const std::string& allowed,
                                              const std::string& probe);
  // The same for deletes of the namespace's pod `pod` (returns once a dry-run delete of it is
  // refused).
  std::vector<std::string> RefusePodDeletes(const std::string& name, const std::string& pod);
  // A ValidatingAdmissionPolicy `name` and its binding to the test's namespace, refusing
  // `operation` on `resource` of API `group` where the CEL expression `allowed` is false.
  std::vector<std::string> Refuse(const std::string& name, const std::string& group,
                                  const std::string& resource, const std::string& operation,
                                  const std::string& allowed);
  // PriorityClasses low-<id> (10) and high-<id> (1000).
  void PriorityClasses();
  // Creates every object of the manifest `file` (relative to the source tree; the kinds of
  // deploy/: namespaces, service accounts, config maps, RBAC, CRDs, services, deployments,
  // daemon sets); one that exists is replaced by the manifest's version. Unknown fields are
  // errors (fieldValidation=Strict). `dry_run`: the server checks each write and stores none.
  void ApplyManifest(const std::string& file, bool dry_run = false);
  // Installs deploy/crds/queues.gpuplane.io.yaml (if not there) and returns once Queues are
  // served; removes it and returns once they are not (the plane is shared: a test that removes
  // it leaves the next one to install it again).
  void InstallQueueDefinition();
  void RemoveQueueDefinition();
  // A Queue `name` for the test's namespace with `resources` (its spec.resources).
  void Queue(const std::string& name, const nlohmann::json& resources);
  // The scheduler in this process, on a thread (its name set to the test's); it leads while
  // `leading_` is true.
  void Start(SchedulerOptions o = {});
  nlohmann::json Get(const std::string& path);
  nlohmann::json List(const std::string& collection);  // in the test's namespace
  std::string NodeOf(const std::string& pod);
  nlohmann::json Condition(const std::string& pod, const std::string& type);

  // `gpuplane scheduler` as a child process (GPUPLANE_BIN) with `args` after the kubeconfig
  // (the plane's admin one unless `kubeconfig` is given) and scheduler name; its output
  // appended to `log`. Returns -1 without GPUPLANE_BIN.
  pid_t Spawn(const std::vector<std::string>& args, const std::string& log,
              const std::string& kubeconfig = "");
  void Kill(pid_t pid, int signal);

  // Every gang (Workload) in the namespace is whole (all its pods bound, their claims
  // allocated) or has no bound member and no allocated claim; no device is in two claims;
  // no gang intent is open. The first violation, or "".
  std::string GangViolation();
  // For failure messages: each pod of the namespace (node, deletionTimestamp, nominated node,
  // PodScheduled) and each claim (allocated devices, reservedFor), one line each, as the API
  // has them now.
  std::string Describe();

  std::unique_ptr<Client> client_;
  std::string dir_, id_, ns_, cls_, name_;
  std::unique_ptr<Scheduler> scheduler_;
  std::thread thread_;
  std::atomic<bool> leading_{true};
  absl::Status status_;
  std::vector<pid_t> children_;
  std::vector<std::string> nodes_;  // made by Node(); deleted, with their slices, at the end
};

// For tests that run `gpuplane scheduler` as processes (Spawn): skipped without GPUPLANE_BIN
// as well.
class SchedulerBinaryTest : public SchedulerPlaneTest {
 protected:
  void SetUp() override;
};

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_PLANE_TESTING_H_
