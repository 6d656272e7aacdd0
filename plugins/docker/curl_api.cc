#include "plugins/docker/curl_api.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/util/lazy_library.h"

namespace fleetplan {
absl::StatusOr<CurlApi> OpenCurl(const char* library_name) {
  absl::StatusOr<LazyLibrary> library =
      LazyLibrary::Open(library_name, "libcurl4", "the docker transport");
  if (!library.ok()) return library.status();
  CurlApi api{};
  library->Load(api.easy_init, "curl_easy_init");
  library->Load(api.easy_setopt, "curl_easy_setopt");
  library->Load(api.easy_perform, "curl_easy_perform");
  library->Load(api.easy_getinfo, "curl_easy_getinfo");
  library->Load(api.easy_cleanup, "curl_easy_cleanup");
  library->Load(api.easy_strerror, "curl_easy_strerror");
  library->Load(api.easy_send, "curl_easy_send");
  library->Load(api.easy_recv, "curl_easy_recv");
  library->Load(api.slist_append, "curl_slist_append");
  library->Load(api.slist_free_all, "curl_slist_free_all");
  CURLcode (*global_init)(long) = nullptr;
  library->Load(global_init, "curl_global_init");
  if (absl::Status complete = library->Check(); !complete.ok()) return complete;
  if (CURLcode code = global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat("curl_global_init failed: ", api.easy_strerror(code)));
  }
  return api;  // the library stays open for the process's life
}

absl::StatusOr<const CurlApi*> Curl() {
  return LazyLibrary::Once<CurlApi>([] { return OpenCurl(kCurlLibrary); });
}

}  // namespace fleetplan
