// Writers that print Doc trees as JSON or YAML (block style, the way kubectl prints objects).
// Stateless functions; thread-safe.
#ifndef GPUPLANE_API_WRITER_H_
#define GPUPLANE_API_WRITER_H_

#include <string>

#include "api/doc.h"

namespace gpuplane::api {

// `indent` 0 prints one line; otherwise pretty-prints with that many spaces per level.
void AppendJson(std::string& out, const Doc& doc, int indent = 0);
std::string ToJson(const Doc& doc, int indent = 0);

// One YAML document without the leading `---`.
void AppendYaml(std::string& out, const Doc& doc);
std::string ToYaml(const Doc& doc);

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_WRITER_H_
