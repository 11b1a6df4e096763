// Kubernetes name and value formats (DNS labels and subdomains, label keys and values, DRA
// qualified names, pool names, semantic versions). Each check returns an empty string when the
// value is valid, else a message saying what is wrong. Pure functions; thread-safe.
#ifndef GPUPLANE_API_NAMES_H_
#define GPUPLANE_API_NAMES_H_

#include <string>
#include <string_view>

namespace gpuplane::api {

std::string CheckDnsLabel(std::string_view s);      // RFC 1123 label, at most 63
std::string CheckDnsSubdomain(std::string_view s);  // RFC 1123 subdomain, at most 253
std::string CheckDriverName(std::string_view s);    // DNS subdomain, at most 63
std::string CheckPoolName(std::string_view s);      // DNS subdomains joined by '/', at most 253
std::string CheckLabelKey(std::string_view s);      // [prefix/]name
std::string CheckLabelValue(std::string_view s);
// DRA attribute / capacity name: [domain/]C-identifier, domain at most 63, identifier at most 32.
std::string CheckQualifiedName(std::string_view s);
std::string CheckSemver(std::string_view s);  // semver.org 2.0.0

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_NAMES_H_
