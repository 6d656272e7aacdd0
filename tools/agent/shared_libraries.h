#ifndef FLEETPLAN_TOOLS_AGENT_SHARED_LIBRARIES_H_
#define FLEETPLAN_TOOLS_AGENT_SHARED_LIBRARIES_H_

// The preflight `libraries` check: a program's shared libraries resolved
// the way the dynamic loader resolves them when the program starts. The
// loader the program names (its ELF PT_INTERP) runs it in trace mode
// (LD_TRACE_LOADED_OBJECTS=1, as ldd does) in this process's environment,
// so LD_LIBRARY_PATH and the loader cache count; its list is parsed here.
// Whatever cannot be determined (no loader to run, a list that cannot be
// read) is a skip saying why, never ok.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/protocol/check_line.h"

namespace fleetplan {

// What a program file is, as far as loading it goes.
struct ProgramLoader {
  enum class Kind { kNotElf, kStatic, kDynamic };
  Kind kind = Kind::kNotElf;
  std::string interpreter;  // kDynamic: the loader's path, e.g. /lib64/ld-linux-x86-64.so.2
};

// Reads `path`'s ELF header and program headers. NotFound when it does not
// exist; the errno's message otherwise (PermissionDenied, ...); a file that
// is not ELF (a script) is kNotElf, and so is a truncated one.
absl::StatusOr<ProgramLoader> ReadProgramLoader(const std::string& path);

// The loader's list of a program's libraries, read line by line.
struct LoaderList {
  std::vector<std::pair<std::string, std::string>> resolved;  // name, path
  std::vector<std::string> missing;   // libraries not found
  std::vector<std::string> errors;    // other loader errors: a version not found, ...
  std::vector<std::string> unparsed;  // lines in no form this parser knows
};

// Parses the trace output (`\tlibz.so.1 => /lib/libz.so.1 (0x...)`,
// `\tlibfoo.so => not found`, `\tlinux-vdso.so.1 (0x...)`) and the
// loader's error lines (`prog: error while loading shared libraries:
// libfoo.so: cannot open shared object file: ...`, `prog: /lib/libc.so.6:
// version `GLIBC_2.99' not found (required by prog)`).
LoaderList ParseLoaderList(absl::string_view output);

// The outcome of the libraries check and what the program loads.
struct LibrariesResult {
  CheckResult check;
  std::vector<std::pair<std::string, std::string>> resolved;  // when ok
};

struct LibrariesOptions {
  std::string program;
  bool check_only = false;  // a missing program: skip (not there yet), not fail
  std::string loader;       // for tests: run this instead of the program's PT_INTERP
};

// The `libraries` check of `options.program`:
//   fail  the program is missing (apply), names a loader that is not here,
//         or needs a library or version the loader does not find;
//   skip  not ELF (a script), missing under check_only, unreadable, or the
//         loader could not run or printed what cannot be read;
//   ok    statically linked, or every library listed resolves.
LibrariesResult CheckLibraries(const LibrariesOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_SHARED_LIBRARIES_H_
