// Plain-scalar resolution shared by the YAML reader and writer (internal to api/).
// Pure functions; thread-safe.
#ifndef GPUPLANE_API_INTERNAL_YAML_SCALAR_H_
#define GPUPLANE_API_INTERNAL_YAML_SCALAR_H_

#include <string>

#include "api/doc.h"

namespace gpuplane::api::internal {

// Resolves an unquoted YAML scalar to null, bool, int, float or string, the way Kubernetes'
// YAML->JSON conversion (YAML 1.1 rules) does.
Doc ResolvePlain(const std::string& value, uint32_t line);

}  // namespace gpuplane::api::internal

#endif  // GPUPLANE_API_INTERNAL_YAML_SCALAR_H_
