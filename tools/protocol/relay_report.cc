#include "tools/protocol/relay_report.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tools/util/human_units.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kPrefix = "fleetplan-relay ";

std::string Line(const nlohmann::json& event) { return absl::StrCat(kPrefix, event.dump()); }

// One typed line into `report`; false when it is not one.
bool ParseLine(absl::string_view line, RelayReport* report) {
  if (!absl::ConsumePrefix(&line, kPrefix)) return false;
  nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object()) return false;
  try {
    const std::string kind = event.at("event").get<std::string>();
    if (kind == "serving") {
      report->serving = RelayServing{event.at("port").get<int>()};
    } else if (kind == "fallback") {
      report->fallbacks.push_back(
          {event.at("from").get<std::string>(), event.at("why").get<std::string>()});
    } else if (kind == "received") {
      report->received =
          RelayReceived{event.at("files").get<uint64_t>(), event.at("bytes").get<uint64_t>(),
                        event.at("from").get<std::vector<std::string>>(),
                        event.at("removed").get<uint64_t>()};
    } else {
      return false;
    }
  } catch (const nlohmann::json::exception&) {
    return false;  // a field missing or of another type: not a report
  }
  return true;
}

}  // namespace

std::string RelayServingLine(const RelayServing& serving) {
  return Line({{"event", "serving"}, {"port", serving.port}});
}

std::string RelayFallbackLine(const RelayFallback& fallback) {
  return Line({{"event", "fallback"}, {"from", fallback.from}, {"why", fallback.why}});
}

std::string RelayReceivedLine(const RelayReceived& received) {
  return Line({{"event", "received"},
               {"files", received.files},
               {"bytes", received.bytes},
               {"from", received.from},
               {"removed", received.removed}});
}

RelayReport ParseRelayReport(absl::string_view output) {
  RelayReport report;
  for (absl::string_view line : absl::StrSplit(output, '\n')) ParseLine(line, &report);
  return report;
}

std::string DescribeRelayFallback(const RelayFallback& fallback) {
  return absl::StrCat("relay: falling back from ", fallback.from, " (", fallback.why, ")");
}

std::string DescribeRelayReceived(const RelayReceived& received) {
  return absl::StrCat("received ", received.files, " files (", FormatBytes(received.bytes),
                      ") from ", received.from.empty() ? "none" : absl::StrJoin(received.from, " and "),
                      ", removed ", received.removed);
}

}  // namespace fleetplan
