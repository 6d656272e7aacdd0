#ifndef FLEETPLAN_PLUGINS_DOCKER_CURL_API_H_
#define FLEETPLAN_PLUGINS_DOCKER_CURL_API_H_

// libcurl, opened when the docker transport first talks to a daemon instead
// of linked into every fleetplan binary: its dependency tree (TLS, Kerberos,
// LDAP, IDN ...) cost each process about 5 ms at start, paid by every apply
// on every transport although only docker speaks HTTP.

#include <curl/curl.h>

#include "absl/status/statusor.h"

namespace fleetplan {

// The libcurl functions the docker transport calls, as loaded.
struct CurlApi {
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  CURLcode (*easy_send)(CURL*, const void*, size_t, size_t*);
  CURLcode (*easy_recv)(CURL*, void*, size_t, size_t*);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

inline constexpr char kCurlLibrary[] = "libcurl.so.4";

// Opens `library_name` and finds the functions; for tests, Curl() otherwise.
absl::StatusOr<CurlApi> OpenCurl(const char* library_name);

// Opens libcurl once per process (and runs curl_global_init, which is not
// thread-safe, under the same once). An error naming the library and its
// package when it cannot be opened or lacks a function.
absl::StatusOr<const CurlApi*> Curl();

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_CURL_API_H_
