#include "tools/util/did_you_mean.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fleetplan {
namespace {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

std::string ClosestMatch(absl::string_view word,
                         const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    size_t distance = EditDistance(word, candidate);
    size_t limit = std::max<size_t>(1, std::max(word.size(), candidate.size()) / 3);
    if (distance > limit) continue;
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string DidYouMean(absl::string_view word,
                       const std::vector<std::string>& candidates) {
  std::string match = ClosestMatch(word, candidates);
  if (match.empty()) return "";
  return absl::StrCat("; did you mean `", match, "`?");
}

}  // namespace fleetplan
