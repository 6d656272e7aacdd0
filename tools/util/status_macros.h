#ifndef FLEETPLAN_TOOLS_UTIL_STATUS_MACROS_H_
#define FLEETPLAN_TOOLS_UTIL_STATUS_MACROS_H_

// Debian's Abseil (20220623) ships no RETURN_IF_ERROR / ASSIGN_OR_RETURN;
// these are the project's one copy of each.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define FP_STATUS_CONCAT_INNER_(a, b) a##b
#define FP_STATUS_CONCAT_(a, b) FP_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function with the status of `expr` when it is
// not OK.
#define FP_RETURN_IF_ERROR(expr)                     \
  do {                                               \
    ::absl::Status fp_status_ = (expr);              \
    if (!fp_status_.ok()) return fp_status_;         \
  } while (false)

// `FP_ASSIGN_OR_RETURN(auto x, F());` assigns the value of a StatusOr, or
// returns its status from the enclosing function.
#define FP_ASSIGN_OR_RETURN(lhs, expr) \
  FP_ASSIGN_OR_RETURN_IMPL_(FP_STATUS_CONCAT_(fp_statusor_, __LINE__), lhs, expr)

#define FP_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // FLEETPLAN_TOOLS_UTIL_STATUS_MACROS_H_
