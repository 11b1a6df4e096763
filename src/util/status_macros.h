// Helpers for propagating absl::Status / absl::StatusOr through library code, which never throws.
// Stateless; safe from any thread.
#ifndef GPUPLANE_UTIL_STATUS_MACROS_H_
#define GPUPLANE_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GPUPLANE_CONCAT_INNER_(a, b) a##b
#define GPUPLANE_CONCAT_(a, b) GPUPLANE_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status gpuplane_status_ = (expr);            \
    if (!gpuplane_status_.ok()) return gpuplane_status_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)   \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

// `ASSIGN_OR_RETURN(auto x, F());` declares x from an OK StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(GPUPLANE_CONCAT_(gpuplane_statusor_, __LINE__), lhs, expr)

#endif  // GPUPLANE_UTIL_STATUS_MACROS_H_
