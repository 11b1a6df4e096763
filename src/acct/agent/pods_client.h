// The node's Pod objects from the Kubernetes API server: GET /api/v1/pods with
// fieldSelector=spec.nodeName=NODE, read like `kubectl get pods -o json` (sources.h). In a
// cluster the server, token and CA come from the service account (InClusterApiServer).
// Each call makes its own HTTP request and returns values; thread-safe. Errors:
// FailedPrecondition outside a cluster, Unavailable when the server does not answer,
// InvalidArgument when the answer cannot be read.
#ifndef GPUPLANE_ACCT_AGENT_PODS_CLIENT_H_
#define GPUPLANE_ACCT_AGENT_PODS_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "acct/sources.h"

namespace gpuplane::acct {

struct ApiServer {
  std::string url;      // https://10.0.0.1:443 or http://127.0.0.1:8001 (kubectl proxy)
  std::string token;    // bearer token, or empty
  std::string ca_file;  // CA bundle for https, or empty for the system's
};

// From KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount;
// an error saying what is missing outside a cluster.
absl::StatusOr<ApiServer> InClusterApiServer();

absl::StatusOr<PodIndex> ListNodePods(const ApiServer& api, const std::string& node,
                                      double timeout_seconds = 5);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_AGENT_PODS_CLIENT_H_
