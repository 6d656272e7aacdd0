#include "tools/apply/authorize_key.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {

std::optional<std::string> PublicKeyFromOutput(absl::string_view output) {
  std::optional<std::string> key;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(line, "ssh-") || absl::StartsWith(line, "ecdsa-")) {
      key = std::string(line);
    }
  }
  return key;
}

std::string AuthorizeKeyCommand(absl::string_view public_key) {
  std::string key = ShellQuote(public_key);
  return absl::StrCat(
      "set -e; umask 077; mkdir -p ~/.ssh; chmod 700 ~/.ssh; "
      "f=~/.ssh/authorized_keys; touch \"$f\"; chmod 600 \"$f\"; "
      "if ! grep -qxF -e ", key, " \"$f\"; then "
      // $(tail -c1) is empty when the file is empty or ends in a newline.
      "if [ -n \"$(tail -c1 \"$f\")\" ]; then echo >> \"$f\"; fi; "
      "printf '%s\\n' ", key, " >> \"$f\"; fi");
}

}  // namespace fleetplan
