#include "tools/agent/shared_libraries.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/agent/sockets.h"
#include "tools/process/subprocess.h"

namespace fleetplan {
namespace {

// How long the loader may take to list a program's libraries.
constexpr absl::Duration kLoaderTimeout = absl::Seconds(60);

absl::Status ErrnoStatus(int error, absl::string_view what) {
  std::string message = absl::StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

bool ReadAt(int fd, void* buffer, size_t size, off_t offset) {
  return pread(fd, buffer, size, offset) == static_cast<ssize_t>(size);
}

// The PT_INTERP of an ELF file of class Ehdr/Phdr; kNotElf when the headers
// cannot be read whole.
template <typename Ehdr, typename Phdr>
ProgramLoader ReadInterpreter(int fd) {
  ProgramLoader loader;
  Ehdr header;
  if (!ReadAt(fd, &header, sizeof(header), 0) || header.e_phentsize != sizeof(Phdr)) {
    return loader;
  }
  loader.kind = ProgramLoader::Kind::kStatic;
  for (size_t i = 0; i < header.e_phnum; ++i) {
    Phdr program;
    if (!ReadAt(fd, &program, sizeof(program), header.e_phoff + i * sizeof(Phdr))) {
      return ProgramLoader{};
    }
    if (program.p_type != PT_INTERP) continue;
    std::string path(program.p_filesz, '\0');
    if (program.p_filesz == 0 || program.p_filesz > 4096 ||
        !ReadAt(fd, path.data(), path.size(), program.p_offset)) {
      return ProgramLoader{};
    }
    path.resize(std::strlen(path.c_str()));
    loader.kind = ProgramLoader::Kind::kDynamic;
    loader.interpreter = std::move(path);
  }
  return loader;
}

// "libfoo.so" out of "<program>: error while loading shared libraries:
// libfoo.so: cannot open shared object file: ...", else "".
std::string MissingFromLoadError(absl::string_view line) {
  constexpr absl::string_view kLoading = "error while loading shared libraries: ";
  constexpr absl::string_view kCannotOpen = ": cannot open shared object file";
  size_t at = line.find(kLoading);
  if (at == absl::string_view::npos) return "";
  absl::string_view rest = line.substr(at + kLoading.size());
  size_t end = rest.find(kCannotOpen);
  return end == absl::string_view::npos ? "" : std::string(rest.substr(0, end));
}

// True for "(0x00007f...)".
bool IsLoadAddress(absl::string_view text) {
  return absl::StartsWith(text, "(0x") && absl::EndsWith(text, ")");
}

std::string Quoted(const std::vector<std::string>& lines) {
  constexpr size_t kShown = 3;
  std::vector<std::string> shown(lines.begin(),
                                 lines.begin() + std::min(lines.size(), kShown));
  return absl::StrCat("'", absl::StrJoin(shown, "', '"), "'",
                      lines.size() > kShown ? absl::StrCat(" and ", lines.size() - kShown,
                                                           " more")
                                            : "");
}

CheckResult Libraries(CheckStatus status, std::string message) {
  return {std::string(kCheckLibraries), status, std::move(message)};
}

// The check's verdict on what the loader printed and how it ended.
CheckResult Judge(const std::string& program, const std::string& loader,
                  const Completed& run, const LoaderList& list) {
  if (!list.missing.empty()) {
    const char* path = std::getenv("LD_LIBRARY_PATH");
    return Libraries(
        CheckStatus::kFail,
        absl::StrCat(program, " needs ", absl::StrJoin(list.missing, ", "),
                     ", not found on this node (LD_LIBRARY_PATH=", path == nullptr ? "" : path,
                     "); expected every shared library of the job's program to resolve; fix: "
                     "install them on this node, or add their folder to LD_LIBRARY_PATH in "
                     "[env]"));
  }
  if (!list.errors.empty()) {
    return Libraries(CheckStatus::kFail,
                     absl::StrCat("the loader ", loader, " cannot load ", program, ": ",
                                  absl::StrJoin(list.errors, "; "),
                                  "; expected every shared library of the job's program to "
                                  "load; fix: install libraries of the versions it was built "
                                  "against on this node, or build it for this node's system"));
  }
  std::string not_checked = "; libraries not checked";
  if (run.timed_out) {
    return Libraries(CheckStatus::kSkip,
                     absl::StrCat("the loader ", loader, " did not list the libraries of ",
                                  program, " within ", absl::FormatDuration(kLoaderTimeout),
                                  not_checked));
  }
  if (run.status != 0) {
    std::string said(absl::StripAsciiWhitespace(run.output));
    return Libraries(CheckStatus::kSkip,
                     absl::StrCat("the loader ", loader, " exited with status ", run.status,
                                  " listing the libraries of ", program,
                                  said.empty() ? " and printed nothing" : ": " + said,
                                  not_checked));
  }
  if (!list.unparsed.empty()) {
    return Libraries(CheckStatus::kSkip,
                     absl::StrCat("cannot read the loader's list of the libraries of ",
                                  program, ": unexpected ", Quoted(list.unparsed),
                                  not_checked));
  }
  if (list.resolved.empty()) {
    return Libraries(CheckStatus::kSkip,
                     absl::StrCat("the loader ", loader, " listed no libraries for ",
                                  program, not_checked));
  }
  return Libraries(CheckStatus::kOk,
                   absl::StrCat(program, ": all ", list.resolved.size(),
                                " shared libraries resolve (loader ", loader, ")"));
}

}  // namespace

absl::StatusOr<ProgramLoader> ReadProgramLoader(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, path);
  unsigned char ident[EI_NIDENT];
  if (!ReadAt(fd.get(), ident, sizeof(ident), 0) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return ProgramLoader{};
  }
  if (ident[EI_CLASS] == ELFCLASS64) return ReadInterpreter<Elf64_Ehdr, Elf64_Phdr>(fd.get());
  if (ident[EI_CLASS] == ELFCLASS32) return ReadInterpreter<Elf32_Ehdr, Elf32_Phdr>(fd.get());
  return ProgramLoader{};
}

LoaderList ParseLoaderList(absl::string_view output) {
  LoaderList list;
  for (absl::string_view raw : absl::StrSplit(output, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    if (std::string missing = MissingFromLoadError(line); !missing.empty()) {
      list.missing.push_back(std::move(missing));
      continue;
    }
    if (absl::StrContains(line, "error while loading shared libraries") ||
        (absl::StrContains(line, ": version `") && absl::StrContains(line, "' not found"))) {
      list.errors.emplace_back(line);
      continue;
    }
    // "name => path (0x...)", "name => not found", "name => (0x...)"
    std::vector<absl::string_view> arrow = absl::StrSplit(line, absl::MaxSplits(" => ", 1));
    if (arrow.size() == 2) {
      absl::string_view name = absl::StripAsciiWhitespace(arrow[0]);
      absl::string_view target = absl::StripAsciiWhitespace(arrow[1]);
      if (name.empty() || absl::StrContains(name, ' ')) {
        list.unparsed.emplace_back(line);
      } else if (target == "not found") {
        list.missing.emplace_back(name);
      } else if (IsLoadAddress(target)) {
        list.resolved.emplace_back(name, "");
      } else if (size_t space = target.rfind(' ');
                 space != absl::string_view::npos && IsLoadAddress(target.substr(space + 1)) &&
                 absl::StartsWith(target, "/")) {
        list.resolved.emplace_back(name, target.substr(0, space));
      } else {
        list.unparsed.emplace_back(line);
      }
      continue;
    }
    // "linux-vdso.so.1 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)"
    size_t space = line.rfind(' ');
    if (space != absl::string_view::npos && IsLoadAddress(line.substr(space + 1)) &&
        !absl::StrContains(line.substr(0, space), ' ')) {
      absl::string_view name = line.substr(0, space);
      list.resolved.emplace_back(name, absl::StartsWith(name, "/") ? name : "");
      continue;
    }
    list.unparsed.emplace_back(line);
  }
  return list;
}

LibrariesResult CheckLibraries(const LibrariesOptions& options) {
  const std::string& program = options.program;
  absl::StatusOr<ProgramLoader> kind = ReadProgramLoader(program);
  if (absl::IsNotFound(kind.status())) {
    if (options.check_only) {
      return {Libraries(CheckStatus::kSkip,
                        absl::StrCat(program, " is not on this node yet (apply copies it); "
                                              "libraries not checked")),
              {}};
    }
    return {Libraries(CheckStatus::kFail,
                      absl::StrCat(program, " does not exist; expected the job's program "
                                            "there; fix: check [job] program (a relative path "
                                            "is taken from the workdir)")),
            {}};
  }
  if (!kind.ok()) {
    return {Libraries(CheckStatus::kSkip, absl::StrCat("cannot read ", kind.status().message(),
                                                       "; libraries not checked")),
            {}};
  }
  switch (kind->kind) {
    case ProgramLoader::Kind::kNotElf:
      return {Libraries(CheckStatus::kSkip,
                        absl::StrCat(program, " is not a dynamically linked program (not an "
                                              "ELF file: a script?); libraries not checked")),
              {}};
    case ProgramLoader::Kind::kStatic:
      return {Libraries(CheckStatus::kOk, absl::StrCat(program, " is statically linked")), {}};
    case ProgramLoader::Kind::kDynamic:
      break;
  }
  std::string loader = options.loader.empty() ? kind->interpreter : options.loader;
  struct stat st;
  if (stat(loader.c_str(), &st) != 0) {
    return {Libraries(CheckStatus::kFail,
                      absl::StrCat(program, " names the loader ", loader, ", which is not on "
                                   "this node (", std::strerror(errno), "); expected a program "
                                   "built for this node's system; fix: build it for the nodes' "
                                   "system, or install that loader here")),
            {}};
  }
  SubprocessOptions run;
  run.argv = {loader, program};
  // What ldd sets: list instead of run, and nothing else that changes output.
  run.env = {{"LD_TRACE_LOADED_OBJECTS", "1"}, {"LD_WARN", ""}, {"LD_BIND_NOW", ""},
             {"LD_VERBOSE", ""}};
  absl::StatusOr<Completed> done = RunToCompletion(run, kLoaderTimeout);
  if (!done.ok()) {
    return {Libraries(CheckStatus::kSkip,
                      absl::StrCat("cannot run the loader ", loader, ": ",
                                   done.status().message(), "; libraries not checked")),
            {}};
  }
  LoaderList list = ParseLoaderList(done->output);
  LibrariesResult result{Judge(program, loader, *done, list), {}};
  if (result.check.status == CheckStatus::kOk) result.resolved = std::move(list.resolved);
  return result;
}

}  // namespace fleetplan
