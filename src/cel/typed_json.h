// The typed-value JSON encoding of CEL values used by the conformance vectors and by
// `gpuplane cel eval --output json`: {"int":"3"}, {"uint":"5"}, {"double":1.5|"NaN"|...},
// {"string":"s"}, {"bytes_b64":"..."}, {"bool":true}, {"null":null}, {"list":[V...]},
// {"map":[[K,V]...]}, {"type":"int"}. Pure functions; thread-safe.
#ifndef GPUPLANE_CEL_TYPED_JSON_H_
#define GPUPLANE_CEL_TYPED_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "cel/value.h"
#include "nlohmann/json.hpp"

namespace gpuplane::cel {

absl::StatusOr<Value> ValueFromTypedJson(const nlohmann::json& j);
// REQUIRES: v is not an error (errors are reported separately).
nlohmann::json ValueToTypedJson(const Value& v);

// Exact equality for tests: kinds must match (1 is not 1u), NaN equals NaN, and -0.0 differs
// from 0.0.
bool SameValue(const Value& a, const Value& b);

}  // namespace gpuplane::cel

#endif  // GPUPLANE_CEL_TYPED_JSON_H_
