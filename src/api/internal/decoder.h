// Decoder: walks a Doc tree into typed structs described by field tables (internal/schema.h),
// tracking the field path so every problem is reported with file, line, object and field.
// One Decoder per file; not thread-safe.
// It borrows the file name and the diagnostics list it reports to, which must outlive it.
#ifndef GPUPLANE_API_INTERNAL_DECODER_H_
#define GPUPLANE_API_INTERNAL_DECODER_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/diagnostic.h"
#include "api/doc.h"

namespace gpuplane::api::internal {

class Decoder {
 public:
  // `sink` is borrowed and must outlive the decoder.
  Decoder(std::string_view file, std::vector<Diagnostic>& sink) : file_(file), sink_(sink) {}

  void set_object(std::string label) { object_ = std::move(label); }
  const std::string& object() const { return object_; }
  // The current field path, rendered ("spec.devices[3].attributes[\"x\"]").
  std::string path() const;
  std::string_view file() const { return file_; }

  void Error(uint32_t line, std::string message) {
    Report(Diagnostic::Severity::kError, line, std::move(message));
  }
  void Warn(uint32_t line, std::string message) {
    Report(Diagnostic::Severity::kWarning, line, std::move(message));
  }
  void Report(Diagnostic::Severity severity, uint32_t line, std::string message);
  // Reports at a field below the current path without pushing it.
  void ErrorAt(uint32_t line, std::string_view field, std::string message);

  // Path scopes: each returns the previous depth for Pop(). Segments borrow their names
  // (field tables, Doc keys), which outlive the scope; the path is rendered only on report.
  size_t Push(std::string_view field) { return PushSegment({Segment::kField, field, 0}); }
  size_t PushIndex(size_t index) { return PushSegment({Segment::kIndex, {}, index}); }
  size_t PushKey(std::string_view key) { return PushSegment({Segment::kKey, key, 0}); }
  void Pop(size_t old_size) { segments_.resize(old_size); }

  int errors() const { return errors_; }

 private:
  std::string_view file_;
  std::vector<Diagnostic>& sink_;
  struct Segment {
    enum Kind : uint8_t { kField, kIndex, kKey } kind;
    std::string_view name;
    size_t index;
  };
  size_t PushSegment(Segment s) {
    segments_.push_back(s);
    return segments_.size() - 1;
  }

  std::string object_;
  std::vector<Segment> segments_;
  int errors_ = 0;
};

// RAII path scope.
class PathScope {
 public:
  PathScope(Decoder& d, std::string_view field) : d_(d), old_(d.Push(field)) {}
  PathScope(Decoder& d, size_t index) : d_(d), old_(d.PushIndex(index)) {}
  ~PathScope() { d_.Pop(old_); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  Decoder& d_;
  size_t old_;
};

}  // namespace gpuplane::api::internal

#endif  // GPUPLANE_API_INTERNAL_DECODER_H_
