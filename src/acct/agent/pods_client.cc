#include "acct/agent/pods_client.h"

#include <httplib.h>

#include <cstdlib>

#include "util/strings.h"

namespace gpuplane::acct {
namespace {

constexpr const char* kServiceAccount = "/var/run/secrets/kubernetes.io/serviceaccount";

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// What went wrong, in words: the library's own names are identifiers ("Connection").
std::string Describe(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect (nothing listens there, or the address is wrong)";
    case httplib::Error::ConnectionTimeout:
      return "no answer to the connection within the timeout";
    case httplib::Error::Read:
      return "the connection broke while reading the answer";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLLoadingCerts:
      return "the CA bundle could not be loaded";
    case httplib::Error::SSLServerVerification:
      return "the server's certificate failed verification (its signer or its host name)";
    default:
      return util::Cat("request failed (", httplib::to_string(error), ")");
  }
}

}  // namespace

absl::StatusOr<ApiServer> InClusterApiServer() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return absl::FailedPreconditionError(
        "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); give --apiserver URL "
        "or --pods FILE");
  }
  absl::StatusOr<std::string> token = util::ReadFile(util::Cat(kServiceAccount, "/token"));
  if (!token.ok()) {
    return absl::FailedPreconditionError(
        util::Cat("no service account token at ", kServiceAccount,
                  "/token; mount one (automountServiceAccountToken) or give --pods FILE"));
  }
  std::string h = host;
  if (h.find(':') != std::string::npos) h = util::Cat("[", h, "]");  // IPv6
  return ApiServer{util::Cat("https://", h, ":", port), Trim(*token),
                   util::Cat(kServiceAccount, "/ca.crt")};
}

absl::StatusOr<PodIndex> ListNodePods(const ApiServer& api, const std::string& node,
                                      double timeout_seconds) {
  if (node.empty()) {
    return absl::InvalidArgumentError(
        "the node name is unknown; give --node NAME (in a DaemonSet: the NODE_NAME env from "
        "spec.nodeName)");
  }
  httplib::Client client(api.url);
  if (!client.is_valid()) {
    return absl::InvalidArgumentError(
        util::Cat("--apiserver ", api.url, ": expected http(s)://HOST[:PORT]"));
  }
  if (!api.ca_file.empty()) client.set_ca_cert_path(api.ca_file);
  if (!api.token.empty()) client.set_bearer_token_auth(api.token);
  const auto timeout = std::chrono::microseconds(static_cast<int64_t>(timeout_seconds * 1e6));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  std::string path = util::Cat("/api/v1/pods?fieldSelector=spec.nodeName%3D", node);
  httplib::Result res = client.Get(path);
  if (!res) {
    return absl::UnavailableError(util::Cat("API server ", api.url, ": ", Describe(res.error()),
                                            "; check --apiserver and the network policy"));
  }
  if (res->status != 200) {
    return absl::UnavailableError(util::Cat(
        "API server ", api.url, " answered ", res->status, " to GET ", path,
        res->status == 403 ? "; the agent's service account needs list on pods (deploy/)" : ""));
  }
  return ParsePodsJson(res->body, util::Cat(api.url, path));
}

}  // namespace gpuplane::acct
