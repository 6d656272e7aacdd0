#include "tools/protocol/metric_line.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/util/human_units.h"

namespace fleetplan {
namespace {

// "epoch 1/2" (1-based), "epoch 1" when the total is unknown.
std::string EpochOf(const nlohmann::json& event) {
  int64_t epoch = event.value("epoch", int64_t{0}) + 1;
  int64_t epochs = event.value("epochs", int64_t{0});
  return epochs > 0 ? absl::StrCat("epoch ", epoch, "/", epochs) : absl::StrCat("epoch ", epoch);
}

std::string StepLine(const nlohmann::json& event) {
  int64_t step = event.value("step", int64_t{0});
  int64_t per_epoch = event.value("steps_per_epoch", int64_t{0});
  std::string out = EpochOf(event);
  if (per_epoch > 0) {
    // The step within its epoch; the last of an epoch is its full count.
    int64_t within = step - event.value("epoch", int64_t{0}) * per_epoch;
    absl::StrAppend(&out, " step ", within, "/", per_epoch);
  } else {
    absl::StrAppend(&out, " step ", step);
  }
  if (event.contains("loss")) absl::StrAppend(&out, absl::StrFormat(" loss %.3f", event["loss"].get<double>()));
  if (event.contains("samples_per_sec")) {
    absl::StrAppend(&out, " ", FormatCount(static_cast<int64_t>(event["samples_per_sec"].get<double>())),
                    " samples/s");
  }
  return out;
}

std::string EpochLine(const nlohmann::json& event) {
  std::string out = absl::StrCat(EpochOf(event), " ended:");
  const char* separator = " ";
  if (event.contains("loss")) {
    absl::StrAppend(&out, separator, absl::StrFormat("loss %.3f", event["loss"].get<double>()));
    separator = ", ";
  }
  if (event.contains("test_accuracy")) {
    absl::StrAppend(&out, separator,
                    absl::StrFormat("test accuracy %.3f", event["test_accuracy"].get<double>()));
    separator = ", ";
  }
  if (event.contains("samples_per_sec")) {
    absl::StrAppend(&out, separator,
                    FormatCount(static_cast<int64_t>(event["samples_per_sec"].get<double>())),
                    " samples/s");
  }
  return out;
}

std::string DoneLine(const nlohmann::json& event) {
  int64_t epochs = event.value("epoch", int64_t{0}) + 1;
  std::string after = absl::StrCat("after ", epochs, epochs == 1 ? " epoch" : " epochs");
  if (event.contains("seconds")) {
    absl::StrAppend(&after, ", ", FormatElapsed(absl::Seconds(event["seconds"].get<double>())));
  }
  if (event.contains("test_accuracy")) {
    return absl::StrCat(absl::StrFormat("test accuracy %.3f ", event["test_accuracy"].get<double>()),
                        after);
  }
  return absl::StrCat("done: ", event.value("step", int64_t{0}), " steps ", after);
}

std::optional<std::string> Describe(const nlohmann::json& event) {
  const std::string kind = event.value("event", "");
  if (kind == "step") return StepLine(event);
  if (kind == "epoch") return EpochLine(event);
  if (kind == "done") return DoneLine(event);
  if (kind == "checkpoint") return absl::StrCat("checkpoint at step ", event.value("step", int64_t{0}));
  if (kind == "resume") return absl::StrCat("resumed at step ", event.value("step", int64_t{0}));
  return std::nullopt;
}

// `json[key]` when it is an integer that fits int64_t.
std::optional<int64_t> IntegerField(const nlohmann::json& json, const char* key) {
  auto field = json.find(key);
  if (field == json.end() || !field->is_number_integer()) return std::nullopt;
  if (field->is_number_unsigned()) {
    uint64_t value = field->get<uint64_t>();
    if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(value);
  }
  return field->get<int64_t>();
}

// `json[key]` when it is a number.
std::optional<double> NumberField(const nlohmann::json& json, const char* key) {
  auto field = json.find(key);
  if (field == json.end() || !field->is_number()) return std::nullopt;
  return field->get<double>();
}

}  // namespace

std::optional<std::string> HumanMetricLine(absl::string_view line) {
  // "[node/rank] " first, when the agent put it there.
  absl::string_view prefix;
  if (!line.empty() && line.front() == '[') {
    size_t end = line.find("] ");
    if (end == absl::string_view::npos) return std::nullopt;
    prefix = line.substr(0, end + 2);
  }
  absl::string_view body = line.substr(prefix.size());
  if (body.empty() || body.front() != '{' || body.back() != '}') return std::nullopt;
  nlohmann::json event = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object() || !event.contains("event") || !event["event"].is_string()) {
    return std::nullopt;
  }
  try {
    std::optional<std::string> described = Describe(event);
    if (!described.has_value()) return std::nullopt;
    return absl::StrCat(prefix, *described);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a field of another type: not the trainer's
  }
}

std::optional<int64_t> MetricLineStep(absl::string_view line) {
  // Most lines are not JSON: they are passed by before any parsing.
  if (!absl::StrContains(line, "\"step\"")) return std::nullopt;
  std::optional<MetricEvent> event = ParseMetricEvent(line);
  if (!event.has_value()) return std::nullopt;
  return event->step;
}

std::optional<MetricEvent> ParseMetricEvent(absl::string_view line) {
  line = absl::StripTrailingAsciiWhitespace(line);
  if (line.empty() || line.front() != '{' || line.back() != '}') return std::nullopt;
  nlohmann::json json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("event") || !json["event"].is_string()) {
    return std::nullopt;
  }
  MetricEvent event;
  event.event = json["event"].get<std::string>();
  event.step = IntegerField(json, "step");
  event.epoch = IntegerField(json, "epoch");
  event.loss = NumberField(json, "loss");
  event.samples_per_sec = NumberField(json, "samples_per_sec");
  return event;
}

}  // namespace fleetplan
