#include "plugins/docker/curl_api.h"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetplan {
absl::StatusOr<CurlApi> OpenCurl(const char* library_name) {
  void* library = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("the docker transport needs ", library_name,
                     " (Debian package libcurl4): ", dlerror()));
  }
  std::string missing;
  auto load = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
    if (function == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
  };
  CurlApi api{};
  load(api.easy_init, "curl_easy_init");
  load(api.easy_setopt, "curl_easy_setopt");
  load(api.easy_perform, "curl_easy_perform");
  load(api.easy_getinfo, "curl_easy_getinfo");
  load(api.easy_cleanup, "curl_easy_cleanup");
  load(api.easy_strerror, "curl_easy_strerror");
  load(api.easy_send, "curl_easy_send");
  load(api.easy_recv, "curl_easy_recv");
  load(api.slist_append, "curl_slist_append");
  load(api.slist_free_all, "curl_slist_free_all");
  CURLcode (*global_init)(long) = nullptr;
  load(global_init, "curl_global_init");
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(library_name, " lacks ", missing, ": too old a libcurl for the docker transport"));
  }
  if (CURLcode code = global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat("curl_global_init failed: ", api.easy_strerror(code)));
  }
  return api;  // the library stays open for the process's life
}

absl::StatusOr<const CurlApi*> Curl() {
  static const absl::StatusOr<CurlApi>* const api = new absl::StatusOr<CurlApi>(OpenCurl(kCurlLibrary));
  if (!api->ok()) return api->status();
  return &**api;
}

}  // namespace fleetplan
