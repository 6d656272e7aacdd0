#include "trainer/dist_env.h"

#include <cstdlib>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleetplan::trainer {
namespace {

constexpr const char* kVariables[] = {"RANK",        "LOCAL_RANK",
                                      "WORLD_SIZE",  "LOCAL_WORLD_SIZE",
                                      "MASTER_ADDR", "MASTER_PORT"};

// The integer value of `name` within [min, max]; nullopt when unset.
absl::StatusOr<std::optional<int>> IntVar(const EnvLookup& lookup,
                                          const char* name, int min, int max) {
  const char* value = lookup(name);
  if (value == nullptr) return std::optional<int>();
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < min || parsed > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "=\"", value, "\": expected an integer in [", min,
                     ", ", max, "]"));
  }
  return std::optional<int>(parsed);
}

absl::Status Missing(const char* name) {
  return absl::InvalidArgumentError(absl::StrCat(
      name,
      " is not set: a distributed run needs RANK, WORLD_SIZE, MASTER_ADDR "
      "and MASTER_PORT (unset all of them to run a single process)"));
}

}  // namespace

absl::StatusOr<DistEnv> DistEnvFromEnvironment(const EnvLookup& lookup) {
  bool any_set = false;
  for (const char* name : kVariables) any_set |= lookup(name) != nullptr;
  DistEnv env;
  if (!any_set) return env;

  constexpr int kMaxRanks = 1 << 20;
  auto world_size = IntVar(lookup, "WORLD_SIZE", 1, kMaxRanks);
  if (!world_size.ok()) return world_size.status();
  if (!world_size->has_value()) return Missing("WORLD_SIZE");
  env.world_size = **world_size;

  auto rank = IntVar(lookup, "RANK", 0, env.world_size - 1);
  if (!rank.ok()) return rank.status();
  if (!rank->has_value()) return Missing("RANK");
  env.rank = **rank;

  auto local_world_size =
      IntVar(lookup, "LOCAL_WORLD_SIZE", 1, env.world_size);
  if (!local_world_size.ok()) return local_world_size.status();
  env.local_world_size = local_world_size->value_or(env.world_size);

  auto local_rank = IntVar(lookup, "LOCAL_RANK", 0, env.local_world_size - 1);
  if (!local_rank.ok()) return local_rank.status();
  env.local_rank = local_rank->value_or(env.rank);

  const char* addr = lookup("MASTER_ADDR");
  if (addr == nullptr || *addr == '\0') return Missing("MASTER_ADDR");
  env.master_addr = addr;

  auto port = IntVar(lookup, "MASTER_PORT", 1, 65535);
  if (!port.ok()) return port.status();
  if (!port->has_value()) return Missing("MASTER_PORT");
  env.master_port = **port;
  return env;
}

absl::StatusOr<DistEnv> DistEnvFromEnvironment() {
  return DistEnvFromEnvironment(
      [](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace fleetplan::trainer
