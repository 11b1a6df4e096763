// Fuzz target for the kubeconfig reader (kube/rest_config.h): any bytes give a RestConfig or
// an error naming the input, never a crash or an exception; a config always has an http(s)
// server and a client certificate only with its key.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kube/rest_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpuplane::kube::RestConfig> c =
      gpuplane::kube::ParseKubeconfig(text, "fuzz/kubeconfig");
  if (c.ok()) {
    if (!c->server.starts_with("http")) __builtin_trap();
    bool cert = !c->client_cert_file.empty() || !c->client_cert_pem.empty();
    bool key = !c->client_key_file.empty() || !c->client_key_pem.empty();
    if (cert != key) __builtin_trap();
  } else if (c.status().message().find("fuzz/kubeconfig") == std::string::npos) {
    __builtin_trap();
  }
  return 0;
}
