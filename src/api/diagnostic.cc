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

void Decoder::Report(bool error, uint32_t line, std::string message) {
  if (error) ++errors_;
  sink_.push_back(Diagnostic{error ? Diagnostic::Severity::kError : Diagnostic::Severity::kWarning,
                             std::string(file_), line, object_, path_, std::move(message)});
}

void Decoder::ErrorAt(uint32_t line, std::string_view field, std::string message) {
  size_t old = Push(field);
  Error(line, std::move(message));
  Pop(old);
}

size_t Decoder::Push(std::string_view field) {
  size_t old = path_.size();
  if (!path_.empty()) path_.push_back('.');
  path_.append(field);
  return old;
}

size_t Decoder::PushIndex(size_t index) {
  size_t old = path_.size();
  util::Append(path_, "[", index, "]");
  return old;
}

size_t Decoder::PushKey(std::string_view key) {
  size_t old = path_.size();
  path_.push_back('[');
  util::AppendJsonString(path_, key);
  path_.push_back(']');
  return old;
}

}  // namespace internal
}  // namespace gpuplane::api
