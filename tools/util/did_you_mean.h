#ifndef FLEETPLAN_TOOLS_UTIL_DID_YOU_MEAN_H_
#define FLEETPLAN_TOOLS_UTIL_DID_YOU_MEAN_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetplan {

// The candidate closest to `word` by edit distance, or "" when none is
// close enough to be a likely typo (distance at most a third of the
// longer word, and at least 1).
std::string ClosestMatch(absl::string_view word,
                         const std::vector<std::string>& candidates);

// "; did you mean `x`?" when a close candidate exists, else "".
std::string DidYouMean(absl::string_view word,
                       const std::vector<std::string>& candidates);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_DID_YOU_MEAN_H_
