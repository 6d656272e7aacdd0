#include "tools/process/process_testing.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fleetplan {

bool ProcessRunning(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  // A zombie still answers kill(pid, 0); its state in /proc says 'Z'. The
  // state follows the command name, which is in parentheses.
  // Plain read(): the process may vanish between open and read.
  int fd = open(absl::StrCat("/proc/", pid, "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[1024];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  close(fd);
  if (n <= 0) return false;
  std::string stat(buffer, n);
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

bool WaitUntilGone(pid_t pid, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (ProcessRunning(pid)) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

std::vector<pid_t> PidsAfter(absl::string_view text, absl::string_view key) {
  std::vector<pid_t> pids;
  size_t at = 0;
  while ((at = text.find(key, at)) != absl::string_view::npos) {
    at += key.size();
    size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    int pid;
    if (absl::SimpleAtoi(text.substr(at, end - at), &pid)) pids.push_back(pid);
  }
  return pids;
}

std::string MakeTempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string templ = absl::StrCat(base != nullptr ? base : "/tmp", "/fpXXXXXX");
  if (mkdtemp(templ.data()) == nullptr) abort();
  return templ;
}

}  // namespace fleetplan
