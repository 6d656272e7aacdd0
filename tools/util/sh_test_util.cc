#include "tools/util/sh_test_util.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace fleetplan {

absl::StatusOr<std::string> RunSh(const std::string& script) {
  int fds[2];
  if (pipe(fds) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  pid_t pid = fork();
  if (pid < 0) {
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) {
    return absl::FailedPreconditionError(
        absl::StrCat("sh died (wait status ", status, ") running: ", script));
  }
  if (WEXITSTATUS(status) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sh exited with code ", WEXITSTATUS(status), " running: ", script));
  }
  return output;
}

std::map<std::string, std::string> ParseEnvZero(absl::string_view output) {
  std::map<std::string, std::string> env;
  for (absl::string_view entry : absl::StrSplit(output, '\0', absl::SkipEmpty())) {
    size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) continue;
    env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  return env;
}

std::string MakeTestDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(base ? base : "/tmp", "/shXXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
  }
  return pattern;
}

void WriteFileOrDie(const std::string& path, absl::string_view content) {
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), content.size());
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace fleetplan
