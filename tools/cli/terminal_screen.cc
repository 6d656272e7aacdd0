#include "tools/cli/terminal_screen.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

constexpr char kEnter[] = "\x1b[?1049h\x1b[?25l";  // alternate screen, cursor hidden
constexpr char kLeave[] = "\x1b[?25h\x1b[?1049l";
constexpr char kHome[] = "\x1b[H";
constexpr char kClearLine[] = "\x1b[K";
constexpr char kClearBelow[] = "\x1b[J";
constexpr char kReset[] = "\x1b[0m";

// `line` cut to `columns` visible characters: colour codes (ESC [ ... m)
// take no column and are kept whole; a UTF-8 character takes one.
std::string Fit(const std::string& line, int columns) {
  std::string out;
  int used = 0;
  bool styled = false;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) {
      size_t end = line.find('m', i);
      if (end == std::string::npos) break;
      std::string code = line.substr(i, end - i + 1);
      styled = code != kReset;
      out += code;
      i = end;
      continue;
    }
    bool continuation = (c & 0xC0) == 0x80;
    if (!continuation && used == columns) break;
    if (!continuation) ++used;
    out.push_back(line[i]);
  }
  if (styled) out += kReset;
  return out;
}

}  // namespace

std::string ScreenFrame(const std::vector<std::string>& lines, int rows, int columns) {
  if (rows < 1) rows = 1;
  if (columns < 1) columns = 1;
  size_t shown = lines.size();
  std::string more;
  if (lines.size() > static_cast<size_t>(rows)) {
    shown = rows - 1;
    more = absl::StrCat("... ", lines.size() - shown, " more lines (a taller window shows them)");
  }
  std::string out = kHome;
  for (size_t i = 0; i < shown; ++i) {
    absl::StrAppend(&out, Fit(lines[i], columns), kClearLine, "\r\n");
  }
  if (!more.empty()) absl::StrAppend(&out, Fit(more, columns), kClearLine);
  absl::StrAppend(&out, kClearBelow);
  return out;
}

absl::StatusOr<std::unique_ptr<TerminalScreen>> TerminalScreen::Open(int in_fd, int out_fd) {
  if (isatty(in_fd) != 1 || isatty(out_fd) != 1) {
    return absl::FailedPreconditionError("the full-screen view needs a terminal");
  }
  std::unique_ptr<TerminalScreen> screen(new TerminalScreen(in_fd, out_fd));
  if (tcgetattr(in_fd, &screen->saved_) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the terminal's mode: ", strerror(errno)));
  }
  struct termios keys = screen->saved_;
  keys.c_lflag &= ~(ICANON | ECHO);  // ISIG stays: Ctrl-C interrupts
  keys.c_cc[VMIN] = 1;
  keys.c_cc[VTIME] = 0;
  tcsetattr(in_fd, TCSANOW, &keys);
  WriteFully(out_fd, kEnter);
  return screen;
}

TerminalScreen::~TerminalScreen() {
  WriteFully(out_fd_, kLeave);
  tcsetattr(in_fd_, TCSANOW, &saved_);
}

void TerminalScreen::Draw(const std::vector<std::string>& lines) {
  struct winsize size = {};
  if (ioctl(out_fd_, TIOCGWINSZ, &size) != 0 || size.ws_row == 0) {
    size.ws_row = 24;
    size.ws_col = 80;
  }
  WriteFully(out_fd_, ScreenFrame(lines, size.ws_row, size.ws_col));
}

std::optional<char> TerminalScreen::ReadKey(absl::Duration timeout) {
  struct pollfd wait = {in_fd_, POLLIN, 0};
  if (poll(&wait, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) {
    return std::nullopt;
  }
  char key;
  ssize_t n = read(in_fd_, &key, 1);
  if (n == 0) absl::SleepFor(timeout);  // no more keys: waits as if none came
  if (n != 1) return std::nullopt;
  return key;
}

}  // namespace fleetplan
