#include "tools/cli/dashboard_launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/cli/paths.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

DashboardServe& Registered() {
  static DashboardServe serve = nullptr;
  return serve;
}

}  // namespace

bool RegisterDashboardServer(DashboardServe serve) {
  Registered() = serve;
  return true;
}

DashboardServe RegisteredDashboardServer() { return Registered(); }

int ExecDashboardProgram(const CommandLine& line) {
  absl::StatusOr<std::string> program = FindDashboard(line.argv0);
  // A missing program is a broken install, not bad input: 1.
  if (!program.ok()) return Fail("dashboard", program.status().message(), kExitApplyFailed);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program->c_str()));
  for (const std::string& arg : line.args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execv(program->c_str(), argv.data());
  return Fail("dashboard", absl::StrCat("cannot run ", *program, ": ", std::strerror(errno)),
              kExitApplyFailed);
}

}  // namespace fleetplan
