// Loads Kubernetes objects from files and directories (YAML or JSON, multi-document, Lists)
// and runs the checks that span objects: duplicate objects, duplicate device names within a
// pool, counter references, unknown DeviceClass references, Queue trees. Not thread-safe; one
// per load. CheckAcross runs the same checks over objects held elsewhere (thread-safe).
#ifndef GPUPLANE_API_LOADER_H_
#define GPUPLANE_API_LOADER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/diagnostic.h"
#include "api/object.h"
#include "api/reader.h"

namespace gpuplane::api {

struct LoadResult {
  std::vector<SourcedObject> objects;
  std::vector<Diagnostic> diagnostics;
  size_t errors() const { return CountErrors(diagnostics); }
  size_t warnings() const { return diagnostics.size() - errors(); }
};

class Loader {
 public:
  // Reads a file, or every *.yaml, *.yml and *.json below a directory (sorted by path).
  // A path that does not exist is returned as an error (a usage problem); problems inside
  // files are collected as diagnostics.
  absl::Status AddPath(const std::string& path);
  // Parses `text` as if read from `file`.
  void AddText(std::string_view text, std::string_view file, Format format);
  // Runs the cross-object checks and hands over everything collected.
  LoadResult Finish();

 private:
  void AddFile(const std::string& path);
  LoadResult result_;
};

// The checks Finish runs, over objects held elsewhere (the live scheduler's cache): appends
// what they find to `out`.
void CheckAcross(const ObjectRefs& objects, std::vector<Diagnostic>& out);

// The one way commands load their inputs: every path in order (files, or directories read
// recursively). A path that is missing or cannot be listed is a usage error, returned as the
// status (NotFound or InvalidArgument, naming the path); problems inside files are the
// result's diagnostics, with file and line.
absl::StatusOr<LoadResult> LoadPaths(const std::vector<std::string>& paths);

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_LOADER_H_
