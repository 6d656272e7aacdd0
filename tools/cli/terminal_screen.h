#ifndef FLEETPLAN_TOOLS_CLI_TERMINAL_SCREEN_H_
#define FLEETPLAN_TOOLS_CLI_TERMINAL_SCREEN_H_

// A full-screen view on a terminal, as top(1) keeps one: the terminal's
// alternate screen with the cursor hidden, keys read one at a time without
// echo, a frame drawn over the last one, and everything as it was once the
// view ends (the destructor; signals reach the command as before: Ctrl-C
// stays an interrupt).

#include <termios.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetplan {

// What is written to draw `lines` on a screen of `rows` x `columns`: from
// the top-left corner, each line cut to the width (colour codes kept whole
// and ended), each cleared to its end, the rest of the screen cleared. When
// they do not fit, the last row says how many lines are left out.
std::string ScreenFrame(const std::vector<std::string>& lines, int rows, int columns);

class TerminalScreen {
 public:
  // Takes over the terminal of `in_fd` (keys) and `out_fd` (the screen).
  // FailedPrecondition when either is not a terminal.
  static absl::StatusOr<std::unique_ptr<TerminalScreen>> Open(int in_fd, int out_fd);
  ~TerminalScreen();
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;

  // Draws `lines` over what was there, fitted to the terminal's size now.
  void Draw(const std::vector<std::string>& lines);
  // The next key pressed within `timeout`; nullopt when none was.
  std::optional<char> ReadKey(absl::Duration timeout);

 private:
  TerminalScreen(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}

  int in_fd_;
  int out_fd_;
  struct termios saved_;  // the terminal's mode before, restored at the end
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_TERMINAL_SCREEN_H_
