#include "tools/spec/validators.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "re2/re2.h"

namespace fleetplan {
namespace {

bool FullMatch(absl::string_view text, const RE2& pattern) {
  return RE2::FullMatch(re2::StringPiece(text.data(), text.size()), pattern);
}

bool IsIpv4(absl::string_view address) {
  static const RE2 kShape(R"(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})");
  if (!FullMatch(address, kShape)) return false;
  for (absl::string_view octet : absl::StrSplit(address, '.')) {
    int value = 0;
    if (!absl::SimpleAtoi(octet, &value) || value > 255) return false;
  }
  return true;
}

bool IsIpv6(absl::string_view address) {
  // Hex groups with at most one "::", optionally ending in an IPv4 quad.
  static const RE2 kShape(
      R"(([0-9A-Fa-f]{1,4}(:[0-9A-Fa-f]{1,4}){7})|)"
      R"((([0-9A-Fa-f]{1,4}(:[0-9A-Fa-f]{1,4}){0,6})?::([0-9A-Fa-f]{1,4}(:[0-9A-Fa-f]{1,4}){0,6})?)|)"
      R"((([0-9A-Fa-f]{1,4}:){6}|([0-9A-Fa-f]{1,4}(:[0-9A-Fa-f]{1,4}){0,4})?::([0-9A-Fa-f]{1,4}:){0,4})\d{1,3}(\.\d{1,3}){3})");
  if (!FullMatch(address, kShape)) return false;
  // "::" may appear once only; and the group count must not exceed 8.
  size_t first = address.find("::");
  if (first != absl::string_view::npos &&
      address.find("::", first + 1) != absl::string_view::npos) {
    return false;
  }
  return true;
}

bool IsHostname(absl::string_view address) {
  static const RE2 kHostname(
      R"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)"
      R"((\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?)");
  // A name of digits and dots only is a mistyped IPv4 address.
  static const RE2 kNumeric(R"([0-9.]+)");
  return address.size() <= 253 && FullMatch(address, kHostname) &&
         !FullMatch(address, kNumeric);
}

}  // namespace

bool IsValidAddress(absl::string_view address) {
  return IsIpv4(address) || IsIpv6(address) || IsHostname(address);
}

bool IsValidEnvName(absl::string_view name) {
  static const RE2 kName(R"([A-Za-z_][A-Za-z0-9_]*)");
  return FullMatch(name, kName);
}

bool IsValidUserName(absl::string_view name) {
  static const RE2 kName(R"([a-z_][a-z0-9_-]{0,30}\$?)");
  return FullMatch(name, kName);
}

bool IsValidBazelLabel(absl::string_view program) {
  static const RE2 kLabel(
      R"(//([A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)*)?(:[A-Za-z0-9_.+=,@~/-]+)?)");
  return program != "//" && FullMatch(program, kLabel);
}

bool IsValidIfnameSpec(absl::string_view value) {
  static const RE2 kSpec(R"(auto|[\^=]?[A-Za-z0-9_.:@-]+(,[A-Za-z0-9_.:@-]+)*)");
  return FullMatch(value, kSpec);
}

bool IsLowercaseIdentifier(absl::string_view name) {
  static const RE2 kName(R"([a-z][a-z0-9_-]*)");
  return FullMatch(name, kName);
}

size_t FindControlCharacter(absl::string_view text, bool allow_tab_newline) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != 0x7f) continue;
    if (allow_tab_newline && (c == '\t' || c == '\n')) continue;
    return i;
  }
  return absl::string_view::npos;
}

}  // namespace fleetplan
