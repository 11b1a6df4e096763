// Decoder: walks a Doc tree into typed structs described by field tables (internal/schema.h),
// tracking the field path so every problem is reported with file, line, object and field.
// One Decoder per file; not thread-safe.
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
  const std::string& path() const { return path_; }
  std::string_view file() const { return file_; }

  void Error(uint32_t line, std::string message) { Report(true, line, std::move(message)); }
  void Warn(uint32_t line, std::string message) { Report(false, line, std::move(message)); }
  void Report(bool error, uint32_t line, std::string message);
  // Reports at a field below the current path without pushing it.
  void ErrorAt(uint32_t line, std::string_view field, std::string message);

  // Path scopes: each returns the previous length for Pop().
  size_t Push(std::string_view field);
  size_t PushIndex(size_t index);
  size_t PushKey(std::string_view key);
  void Pop(size_t old_size) { path_.resize(old_size); }

  int errors() const { return errors_; }

 private:
  std::string_view file_;
  std::vector<Diagnostic>& sink_;
  std::string object_;
  std::string path_;
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
