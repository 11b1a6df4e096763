// Reading members of API objects (nlohmann::json) without copying them. nlohmann's
// `obj.value("metadata", json::object())` returns the member by value: on a Pod that copies its
// whole metadata, managedFields included, on every call, and the scheduler reads every cached
// object's key and version each cycle. Field() returns a reference instead. And `value()`
// throws when the member has another type; Str() does not.
// Contract: Field(obj, key) is obj[key] when obj is an object holding key with a non-null
// value, else an empty object (which reads as empty when iterated, sized, or asked for
// contains() and value()); the reference lives as long as `obj`, or forever (the empty one).
// Str(obj, key) is obj[key]'s text when obj is an object holding key as a string, else empty;
// the view lives as long as `obj`.
// Thread-safety: pure.
#ifndef GPUPLANE_KUBE_JSON_FIELD_H_
#define GPUPLANE_KUBE_JSON_FIELD_H_

#include <nlohmann/json.hpp>
#include <string_view>

namespace gpuplane::kube {

const nlohmann::json& Field(const nlohmann::json& obj, std::string_view key);
std::string_view Str(const nlohmann::json& obj, std::string_view key);

}  // namespace gpuplane::kube

#endif  // GPUPLANE_KUBE_JSON_FIELD_H_
