// Readers that turn YAML or JSON text into Doc trees with source lines. A file may hold several
// documents (YAML `---` separators, or JSON values one after another). Stateless functions;
// thread-safe.
#ifndef GPUPLANE_API_READER_H_
#define GPUPLANE_API_READER_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/doc.h"

namespace gpuplane::api {

enum class Format { kYaml, kJson };

// Picks the format from the file extension (.json / .yaml / .yml), else from the first
// non-blank character ('{' or '[' means JSON).
Format DetectFormat(std::string_view path, std::string_view text);

// Parses every document in `text`. Errors read "FILE:LINE:COL: message" using `file`.
absl::StatusOr<std::vector<Doc>> ReadJson(std::string_view text, std::string_view file);
absl::StatusOr<std::vector<Doc>> ReadYaml(std::string_view text, std::string_view file);
absl::StatusOr<std::vector<Doc>> ReadDocs(std::string_view text, std::string_view file,
                                          Format format);

// Maximum nesting depth accepted by both readers; deeper input is an error, not a crash.
inline constexpr int kMaxDocDepth = 256;

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_READER_H_
