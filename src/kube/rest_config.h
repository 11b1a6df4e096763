// How to reach a Kubernetes API server: the server URL, how to trust it and how to
// authenticate, read from a kubeconfig file (as kubectl reads one) or from the in-cluster
// service account. RestConfig is a plain value the caller owns (copyable; no shared state);
// loading is a pure function of the files and environment it reads, safe from any thread.
// Errors name the file, the line when there is one, the field and what to do.
#ifndef GPUPLANE_KUBE_REST_CONFIG_H_
#define GPUPLANE_KUBE_REST_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpuplane::kube {

struct RestConfig {
  std::string server;  // https://host:port, no trailing slash
  // Trust: a CA bundle as a file or as PEM text; or no verification (tests only).
  std::string ca_file;
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  // Authentication: a bearer token (or a file holding one, re-read on every request so a
  // rotated service-account token is picked up), and/or a client certificate and key.
  std::string token;
  std::string token_file;
  std::string client_cert_file, client_key_file;
  std::string client_cert_pem, client_key_pem;
  std::string source;  // where this came from, for messages: "kubeconfig FILE context C"
};

// Reads `path` (KUBECONFIG syntax: one file) and picks `context`, or the current-context when
// empty. Relative file paths in the kubeconfig are relative to its folder; *-data fields are
// base64 PEM. Unsupported authentication (exec plugins, auth-provider) is an error that says
// so.
absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The same from the kubeconfig's text; `path` names it in messages and anchors relative paths.
absl::StatusOr<RestConfig> ParseKubeconfig(const std::string& text, const std::string& path,
                                           const std::string& context = "");

// From KUBERNETES_SERVICE_HOST/PORT and the service account mounted at `sa_dir` (token
// re-read per request, ca.crt); an error saying what is missing outside a cluster.
absl::StatusOr<RestConfig> InClusterConfig(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_REST_CONFIG_H_
