// Problems found while reading objects: each names the file, line, object and field path.
// Plain value type.
#ifndef GPUPLANE_API_DIAGNOSTIC_H_
#define GPUPLANE_API_DIAGNOSTIC_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpuplane::api {

struct Diagnostic {
  enum class Severity : uint8_t { kError, kWarning };
  Severity severity = Severity::kError;
  std::string file;
  uint32_t line = 0;
  std::string object;  // "ResourceSlice node-a-gpus"; empty before the object is known
  std::string field;   // "spec.devices[3].attributes[\"gpu.nvidia.com/productName\"]"
  std::string message;

  bool is_error() const { return severity == Severity::kError; }
  // "file:line: object: field: message" (empty parts are left out).
  std::string ToString() const;
  bool operator==(const Diagnostic&) const = default;
};

size_t CountErrors(const std::vector<Diagnostic>& diagnostics);

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_DIAGNOSTIC_H_
