// Fuzz target for the watch stream reader of the live mode (kube/informer.h): each line of the
// input is one line from the server. Any bytes never crash or throw; what the cache keeps are
// API objects (JSON objects with a name) under their own keys.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kube/informer.h"
#include "kube/json_field.h"
#include "kube/rest_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpuplane::kube::Informer;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Informer informer(gpuplane::kube::Client(gpuplane::kube::RestConfig{}),
                    gpuplane::kube::InformerOptions{"/api/v1/pods"});
  int code = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!informer.ApplyWatchLine(line, &code)) {
      if (code != 410 && code != -1 && (code <= 0 || code >= 1000)) std::abort();
      break;
    }
  }
  for (const Informer::Keyed& cached : informer.Shared()) {
    if (!cached.object->is_object() || cached.key != Informer::KeyOf(*cached.object) ||
        cached.version != Informer::VersionOf(*cached.object) ||
        gpuplane::kube::Str(gpuplane::kube::Field(*cached.object, "metadata"), "name").empty()) {
      std::abort();
    }
  }
  return 0;
}
