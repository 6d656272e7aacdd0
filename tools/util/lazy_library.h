#ifndef FLEETPLAN_TOOLS_UTIL_LAZY_LIBRARY_H_
#define FLEETPLAN_TOOLS_UTIL_LAZY_LIBRARY_H_

// A Debian library opened (dlopen) when it is first needed,
// instead of linking it into every fleetplan binary: each linked library
// and what it pulls in (libarchive brings ICU and libxml2, libcurl TLS and
// Kerberos) is loaded and relocated at every command's start, paid by
// every command on every transport although only one transport uses it.

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

class LazyLibrary {
 public:
  // How its symbols are seen: by its own callers only, or by every library
  // loaded after it (one whose own plugins resolve their symbols against
  // it, as libslurm's auth and hash plugins do).
  enum class Symbols { kLocal, kGlobal };

  // Opens `soname` (e.g. "libarchive.so.13"); FailedPrecondition naming
  // it, its Debian `package` and `who` needs it when it cannot be opened.
  static absl::StatusOr<LazyLibrary> Open(const char* soname, absl::string_view package,
                                          absl::string_view who,
                                          Symbols symbols = Symbols::kLocal) {
    void* handle =
        dlopen(soname, RTLD_NOW | (symbols == Symbols::kGlobal ? RTLD_GLOBAL : RTLD_LOCAL));
    if (handle == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(who, " needs ", soname,
                                                        " (Debian package ", package,
                                                        "): ", dlerror()));
    }
    return LazyLibrary(handle, soname);
  }

  // Finds `name` into `function`; a missing one is remembered for Check.
  template <typename Function>
  void Load(Function*& function, const char* name) {
    function = reinterpret_cast<Function*>(dlsym(handle_, name));
    if (function == nullptr) absl::StrAppend(&missing_, missing_.empty() ? "" : ", ", name);
  }

  // FailedPrecondition naming every function Load did not find.
  absl::Status Check() const {
    if (missing_.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat(soname_, " lacks ", missing_, ": too old a version"));
  }

  // `api` once Load found every function; else Check's error.
  template <typename Api>
  absl::StatusOr<Api> Complete(Api api) const {
    if (absl::Status complete = Check(); !complete.ok()) return complete;
    return api;
  }

  // What `load` gives (a library's functions, or why they are missing),
  // loaded on the first call for `load`'s type and kept for the process's
  // life: the library stays open, so its functions stay valid, and a
  // missing library is not looked for again. `load` is a lambda, whose
  // type is its own (two functions of one type would share what is kept).
  template <typename Api, typename Load>
  static absl::StatusOr<const Api*> Once(Load load) {
    static_assert(std::is_class_v<Load>, "Once keeps one API per lambda: pass one");
    static const absl::StatusOr<Api>* const api = new absl::StatusOr<Api>(load());
    if (!api->ok()) return api->status();
    return &**api;
  }

 private:
  LazyLibrary(void* handle, const char* soname) : handle_(handle), soname_(soname) {}
  void* handle_;
  const char* soname_;
  std::string missing_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_LAZY_LIBRARY_H_
