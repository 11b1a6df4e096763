#include "api/diagnostic.h"

#include <algorithm>

#include "api/internal/decoder.h"
#include "util/strings.h"

namespace gpuplane::api {

std::string Diagnostic::ToString() const {
  std::string out = file;
  if (line > 0) util::Append(out, ":", line);
  if (!out.empty()) out += ": ";
  if (severity == Severity::kWarning) out += "warning: ";
  if (!object.empty()) util::Append(out, object, ": ");
  if (!field.empty()) util::Append(out, field, ": ");
  out += message;
  return out;
}

size_t CountErrors(const std::vector<Diagnostic>& diagnostics) {
  return static_cast<size_t>(std::count_if(diagnostics.begin(), diagnostics.end(),
                                           [](const Diagnostic& d) { return d.is_error(); }));
}

namespace internal {

void Decoder::Report(Diagnostic::Severity severity, uint32_t line, std::string message) {
  if (severity == Diagnostic::Severity::kError) ++errors_;
  sink_.push_back(
      Diagnostic{severity, std::string(file_), line, object_, path(), std::move(message)});
}

void Decoder::ErrorAt(uint32_t line, std::string_view field, std::string message) {
  size_t old = Push(field);
  Error(line, std::move(message));
  Pop(old);
}

std::string Decoder::path() const {
  std::string out;
  for (const Segment& s : segments_) {
    switch (s.kind) {
      case Segment::kField:
        if (!out.empty()) out.push_back('.');
        out.append(s.name);
        break;
      case Segment::kIndex:
        util::Append(out, "[", s.index, "]");
        break;
      case Segment::kKey:
        out.push_back('[');
        util::AppendJsonString(out, s.name);
        out.push_back(']');
        break;
    }
  }
  return out;
}

}  // namespace internal
}  // namespace gpuplane::api
