#include "tools/protocol/peer_message.h"

#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/util/overloaded.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr int kMaxInt = std::numeric_limits<int>::max();

nlohmann::json StatusesToJson(const RankStatuses& statuses) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [rank, status] : statuses) json[absl::StrCat(rank)] = status;
  return json;
}

nlohmann::json ToJson(const PeerMessage& message) {
  nlohmann::json json = std::visit(
      Overloaded{
          [](const HelloMessage& m) -> nlohmann::json {
            return {{"node", m.node}, {"nproc", m.nproc}};
          },
          [](const StartedMessage& m) -> nlohmann::json { return {{"gen", m.generation}}; },
          [](const EndedMessage& m) -> nlohmann::json {
            return {{"gen", m.generation},
                    {"statuses", StatusesToJson(m.statuses)},
                    {"failed", StatusesToJson(m.failed)},
                    {"error", m.error.has_value() ? RankErrorToJson(*m.error)
                                                  : nlohmann::json(nullptr)}};
          },
          [](const StopMessage& m) -> nlohmann::json {
            nlohmann::json json = nlohmann::json::object();
            if (m.generation.has_value()) json["gen"] = *m.generation;
            return json;
          },
          [](const HeartbeatMessage&) { return nlohmann::json::object(); },
          [](const WelcomeMessage& m) -> nlohmann::json {
            return {{"run_id", m.run_id}, {"node", m.node}};
          },
          [](const StartMessage& m) -> nlohmann::json {
            nlohmann::json members = nlohmann::json::array();
            for (const GenerationMember& member : m.members) {
              members.push_back({{"node", member.node}, {"nproc", member.nproc}});
            }
            return {{"gen", m.generation}, {"why", m.why}, {"members", members}};
          },
          [](const EndMessage& m) -> nlohmann::json {
            return {{"state", std::string(JobPhaseName(m.phase))},
                    {"exit_status", m.exit_status},
                    {"failure", m.failure.has_value() ? JobFailureToJson(*m.failure)
                                                      : nlohmann::json(nullptr)}};
          },
          [](const ProgressMessage& m) -> nlohmann::json { return {{"gen", m.generation}}; },
          [](const CollectStacksMessage& m) -> nlohmann::json { return {{"gen", m.generation}}; },
          [](const StacksMessage& m) -> nlohmann::json {
            nlohmann::json ranks = nlohmann::json::array();
            for (const RankStack& rank : m.ranks) ranks.push_back(RankStackToJson(rank));
            return {{"gen", m.generation}, {"ranks", ranks}};
          },
      },
      message);
  json["t"] = std::string(PeerMessageType(message));
  return json;
}

// What a parser of one message type reads its fields with.
struct Reader {
  const JsonFields& fields;
  absl::string_view document;
};

absl::Status GetStatuses(const Reader& in, const char* key, RankStatuses* out) {
  const nlohmann::json* value = in.fields.Optional(key);
  if (value == nullptr) return InvalidField(in.document, key, "is missing");
  if (!value->is_object()) return InvalidField(in.document, key, "is not an object");
  for (const auto& [name, status] : value->items()) {
    int rank;
    int number;
    if (!absl::SimpleAtoi(name, &rank) || rank < 0 || absl::StrCat(rank) != name) {
      return InvalidField(in.document, key, "has a key that is not a rank");
    }
    if (!JsonToInt(status, &number) || number < 0 || number > 255) {
      return InvalidField(in.document, key, "has a status that is not in 0..255");
    }
    (*out)[rank] = number;
  }
  return absl::OkStatus();
}

// A node's ranks, as the spec bounds nproc_per_node.
constexpr int kMaxNproc = 4096;

absl::StatusOr<PeerMessage> ParseHello(const Reader& in) {
  HelloMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("node", &m.node));
  if (in.fields.Optional("nproc") != nullptr) {
    FP_RETURN_IF_ERROR(in.fields.Get("nproc", 1, kMaxNproc, &m.nproc));
  }
  return m;
}

absl::Status GetMembers(const Reader& in, std::vector<GenerationMember>* out) {
  const nlohmann::json* members = in.fields.Optional("members");
  if (members == nullptr) return absl::OkStatus();
  if (!members->is_array()) return InvalidField(in.document, "members", "is not a list");
  for (const nlohmann::json& member : *members) {
    if (!member.is_object()) {
      return InvalidField(in.document, "members", "holds something that is not an object");
    }
    JsonFields fields(member, in.document);
    GenerationMember parsed;
    FP_RETURN_IF_ERROR(fields.Get("node", &parsed.node));
    FP_RETURN_IF_ERROR(fields.Get("nproc", 1, kMaxNproc, &parsed.nproc));
    out->push_back(std::move(parsed));
  }
  return absl::OkStatus();
}

absl::StatusOr<PeerMessage> ParseStarted(const Reader& in) {
  StartedMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &m.generation));
  return m;
}

absl::StatusOr<PeerMessage> ParseEnded(const Reader& in) {
  EndedMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &m.generation));
  FP_RETURN_IF_ERROR(GetStatuses(in, "statuses", &m.statuses));
  FP_RETURN_IF_ERROR(GetStatuses(in, "failed", &m.failed));
  const nlohmann::json* error = in.fields.Optional("error");
  if (error == nullptr) return InvalidField(in.document, "error", "is missing");
  if (!error->is_null()) {
    FP_ASSIGN_OR_RETURN(RankError parsed, RankErrorFromJson(*error, in.document));
    m.error = std::move(parsed);
  }
  return m;
}

absl::StatusOr<PeerMessage> ParseStop(const Reader& in) {
  StopMessage m;
  if (in.fields.Optional("gen") != nullptr) {
    int generation;
    FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &generation));
    m.generation = generation;
  }
  return m;
}

absl::StatusOr<PeerMessage> ParseHeartbeat(const Reader&) { return HeartbeatMessage{}; }

absl::StatusOr<PeerMessage> ParseWelcome(const Reader& in) {
  WelcomeMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("run_id", &m.run_id));
  FP_RETURN_IF_ERROR(in.fields.Get("node", &m.node));
  return m;
}

absl::StatusOr<PeerMessage> ParseStart(const Reader& in) {
  StartMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &m.generation));
  FP_RETURN_IF_ERROR(in.fields.Get("why", &m.why));
  FP_RETURN_IF_ERROR(GetMembers(in, &m.members));
  return m;
}

absl::StatusOr<PeerMessage> ParseEnd(const Reader& in) {
  EndMessage m;
  std::string state;
  FP_RETURN_IF_ERROR(in.fields.Get("state", &state));
  std::optional<JobPhase> phase = ParseJobPhase(state);
  if (!phase.has_value()) return InvalidField(in.document, "state", "is not a job state");
  m.phase = *phase;
  FP_RETURN_IF_ERROR(in.fields.Get("exit_status", 0, 255, &m.exit_status));
  const nlohmann::json* failure = in.fields.Optional("failure");
  if (failure == nullptr) return InvalidField(in.document, "failure", "is missing");
  if (!failure->is_null()) {
    FP_ASSIGN_OR_RETURN(JobFailure parsed, JobFailureFromJson(*failure, in.document));
    m.failure = std::move(parsed);
  }
  return m;
}

absl::StatusOr<PeerMessage> ParseProgress(const Reader& in) {
  ProgressMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &m.generation));
  return m;
}

absl::StatusOr<PeerMessage> ParseCollect(const Reader& in) {
  CollectStacksMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &m.generation));
  return m;
}

absl::StatusOr<PeerMessage> ParseStacks(const Reader& in) {
  StacksMessage m;
  FP_RETURN_IF_ERROR(in.fields.Get("gen", 0, kMaxInt, &m.generation));
  const nlohmann::json* ranks = in.fields.Optional("ranks");
  if (ranks == nullptr || !ranks->is_array()) {
    return InvalidField(in.document, "ranks", "is not a list");
  }
  for (const nlohmann::json& rank : *ranks) {
    FP_ASSIGN_OR_RETURN(RankStack parsed, RankStackFromJson(rank, in.document));
    m.ranks.push_back(std::move(parsed));
  }
  return m;
}

struct MessageParser {
  absl::string_view type;
  absl::StatusOr<PeerMessage> (*parse)(const Reader& in);
};

// In the order of PeerMessage's alternatives.
constexpr MessageParser kParsers[] = {
    {"hello", ParseHello},     {"started", ParseStarted}, {"ended", ParseEnded},
    {"stop", ParseStop},       {"hb", ParseHeartbeat},    {"welcome", ParseWelcome},
    {"start", ParseStart},     {"end", ParseEnd},         {"progress", ParseProgress},
    {"collect", ParseCollect}, {"stacks", ParseStacks},
};
static_assert(std::size(kParsers) == std::variant_size_v<PeerMessage>);

}  // namespace

absl::string_view PeerMessageType(const PeerMessage& message) {
  return kParsers[message.index()].type;
}

std::string SerializePeerMessage(const PeerMessage& message) { return ToJson(message).dump(); }

absl::StatusOr<PeerMessage> ParsePeerMessage(absl::string_view line) {
  nlohmann::json json = nlohmann::json::parse(line.begin(), line.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::InvalidArgumentError("peer message: not a JSON object");
  auto type = json.find("t");
  if (type == json.end() || !type->is_string()) {
    return absl::InvalidArgumentError("peer message: \"t\" is missing or not a string");
  }
  const std::string& name = type->get_ref<const std::string&>();
  for (const MessageParser& parser : kParsers) {
    if (parser.type != name) continue;
    std::string document = absl::StrCat("peer message '", name, "'");
    JsonFields fields(json, document);
    return parser.parse(Reader{fields, document});
  }
  return absl::InvalidArgumentError(
      absl::StrCat("peer message: unknown type \"", absl::CHexEscape(name), "\""));
}

}  // namespace fleetplan
