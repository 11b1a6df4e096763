// A Kubernetes API client on libcurl: one HTTPS request per call (verbs and paths as the
// REST API has them), bearer tokens re-read from their file on every request, client
// certificates, the cluster's CA; and streams (watch) delivered line by line. Each call takes a
// curl handle of its own from a process-wide pool (handles keep their connections alive, and
// TLS sessions are shared: a handshake per connection, not per request), so a Client is
// thread-safe and cheap to copy.
// Errors: Unavailable when the server cannot be reached (naming the URL and curl's reason);
// an HTTP error status is not an error of the call: it is in Response::status, and
// StatusMessage() reads the API's Status object.
#ifndef GPUPLANE_KUBE_CLIENT_H_
#define GPUPLANE_KUBE_CLIENT_H_

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kube/rest_config.h"

namespace gpuplane::kube {

struct Response {
  long status = 0;  // HTTP status  // NOLINT(google-runtime-int): curl's type
  std::string body;
  bool ok() const { return status >= 200 && status < 300; }
};

class Client {
 public:
  explicit Client(RestConfig config, double timeout_seconds = 30);

  // METHOD `path` (with its query, e.g. "/api/v1/nodes?limit=500") with a JSON body.
  absl::StatusOr<Response> Do(std::string_view method, const std::string& path,
                              const std::string& body = "",
                              std::string_view content_type = "application/json") const;
  absl::StatusOr<Response> Get(const std::string& path) const { return Do("GET", path); }

  // GET `path` as a stream (a watch): `on_line` gets each newline-terminated line until it
  // returns false, the server ends the stream, or `timeout_seconds` pass; each of those ends
  // the call with status 200. When the server answers with another status (410 Gone for a
  // resourceVersion too old, 403, ...) nothing is streamed and the body is in the Response.
  // `cancel`, when given, ends the stream within about a second of becoming true.
  absl::StatusOr<Response> Stream(const std::string& path,
                                  const std::function<bool(std::string_view)>& on_line,
                                  double timeout_seconds,
                                  const std::atomic<bool>* cancel = nullptr) const;

  const RestConfig& config() const { return config_; }

 private:
  RestConfig config_;
  double timeout_seconds_;
};

// The `message` of a Kubernetes Status body, else the body's start, else "HTTP <status>".
std::string StatusMessage(const Response& r);

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_CLIENT_H_
