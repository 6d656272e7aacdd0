#ifndef FLEETPLAN_TOOLS_UTIL_STATUS_MATCHERS_H_
#define FLEETPLAN_TOOLS_UTIL_STATUS_MATCHERS_H_

// GoogleTest matchers for absl::Status and absl::StatusOr, which Debian's
// Abseil does not ship.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace fleetplan {
namespace status_internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// A plain string stands for "contains this"; anything else is a matcher.
inline ::testing::Matcher<std::string> MessageMatcher(const char* substring) {
  return ::testing::HasSubstr(substring);
}
inline ::testing::Matcher<std::string> MessageMatcher(const std::string& substring) {
  return ::testing::HasSubstr(substring);
}
template <typename M>
::testing::Matcher<std::string> MessageMatcher(const M& matcher) {
  return ::testing::MatcherCast<std::string>(matcher);
}

}  // namespace status_internal

// Matches an OK absl::Status or absl::StatusOr.
MATCHER(IsOk, "is OK") {
  const absl::Status& status = status_internal::GetStatus(arg);
  if (!status.ok()) *result_listener << "status is " << status;
  return status.ok();
}

// Matches an OK absl::StatusOr whose value matches `matcher`.
MATCHER_P(IsOkAndHolds, matcher, "") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(matcher, *arg, result_listener);
}

// Matches a status whose code is `code`, whatever its message.
MATCHER_P(StatusIs, code, "") {
  const absl::Status& status = status_internal::GetStatus(arg);
  *result_listener << "status is " << status;
  return status.code() == code;
}

// Matches a status whose code is `code` and whose message matches
// `message_matcher` (a string is taken as a substring to find).
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& status = status_internal::GetStatus(arg);
  *result_listener << "status is " << status;
  if (status.code() != code) return false;
  return ::testing::ExplainMatchResult(
      status_internal::MessageMatcher(message_matcher),
      std::string(status.message()), result_listener);
}

}  // namespace fleetplan

// Asserts that `expr` (a StatusOr) is OK and assigns its value to `lhs`.
#define FP_ASSERT_OK_AND_ASSIGN(lhs, expr)                               \
  FP_ASSERT_OK_AND_ASSIGN_IMPL_(FP_STATUS_CONCAT_(fp_test_or_, __LINE__), \
                                lhs, expr)
#define FP_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  ASSERT_TRUE(statusor.ok()) << statusor.status();         \
  lhs = std::move(statusor).value()

#ifndef FP_STATUS_CONCAT_
#define FP_STATUS_CONCAT_INNER_(a, b) a##b
#define FP_STATUS_CONCAT_(a, b) FP_STATUS_CONCAT_INNER_(a, b)
#endif

#endif  // FLEETPLAN_TOOLS_UTIL_STATUS_MATCHERS_H_
