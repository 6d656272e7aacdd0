#include "plugins/docker/docker_client.h"

#include <sys/un.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "plugins/docker/curl_api.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kDefaultSocket = "/var/run/docker.sock";

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

struct UploadState {
  absl::string_view body;
  size_t offset = 0;
};

size_t ReadBody(char* buffer, size_t size, size_t count, void* in) {
  auto* state = static_cast<UploadState*>(in);
  size_t n = std::min(size * count, state->body.size() - state->offset);
  std::memcpy(buffer, state->body.data() + state->offset, n);
  state->offset += n;
  return n;
}

// The daemon's {"message": "..."} or the raw body.
std::string DaemonMessage(const std::string& body) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("message") &&
      parsed["message"].is_string()) {
    return parsed["message"].get<std::string>();
  }
  return body;
}

}  // namespace

absl::StatusOr<std::string> DockerClient::SocketFromEnvironment() {
  const char* host = std::getenv("DOCKER_HOST");
  if (host == nullptr || *host == '\0') return std::string(kDefaultSocket);
  absl::string_view value = host;
  if (!absl::ConsumePrefix(&value, "unix://") || value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DOCKER_HOST=", host,
        ": the docker transport speaks only to a unix socket (unix:///path)"));
  }
  // Longer paths do not fit a sockaddr_un; curl would report them as an
  // unresolvable host name.
  if (value.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DOCKER_HOST=", host, ": a unix socket path must be shorter than ",
        sizeof(sockaddr_un{}.sun_path), " bytes"));
  }
  return std::string(value);
}

absl::Status DockerClient::DaemonNotRunning(absl::string_view detail) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "no Docker daemon answers at unix://", socket_path_, " (", detail,
      "); start one (`dockerd &` as root, or tests/testbed/dockerd.sh ensure) "
      "or point DOCKER_HOST at its socket"));
}

absl::StatusOr<HttpResponse> DockerClient::Request(
    absl::string_view method, absl::string_view path, absl::string_view body,
    absl::string_view content_type) const {
  FP_ASSIGN_OR_RETURN(const CurlApi* api, Curl());
  CURL* curl = api->easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::string url = absl::StrCat("http://docker/", kDockerApiVersion, path);
  std::string method_string(method);
  HttpResponse response;
  UploadState upload{body};
  struct curl_slist* headers = nullptr;
  std::string type_header = absl::StrCat("Content-Type: ", content_type);
  headers = api->slist_append(headers, type_header.c_str());
  // No "Expect: 100-continue" round trip for archive uploads.
  headers = api->slist_append(headers, "Expect:");

  api->easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path_.c_str());
  api->easy_setopt(curl, CURLOPT_URL, url.c_str());
  api->easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method_string.c_str());
  api->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  api->easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  if (method == "POST" || method == "PUT") {
    api->easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    api->easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    api->easy_setopt(curl, CURLOPT_READDATA, &upload);
    api->easy_setopt(curl, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(body.size()));
  }
  CURLcode code = api->easy_perform(curl);
  api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  api->slist_free_all(headers);
  api->easy_cleanup(curl);
  if (code == CURLE_COULDNT_CONNECT) {
    return DaemonNotRunning(api->easy_strerror(code));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(method, " ", path, " on unix://",
                                               socket_path_, ": ",
                                               api->easy_strerror(code)));
  }
  return response;
}

absl::Status DockerClient::HttpError(const HttpResponse& response,
                                     absl::string_view what) const {
  std::string message =
      absl::StrCat(what, ": ", DaemonMessage(response.body), " (HTTP ",
                   response.status, ")");
  switch (response.status) {
    case 404:
      return absl::NotFoundError(message);
    case 403:  // e.g. a network with active endpoints
    case 409:
      return absl::FailedPreconditionError(message);
    case 400:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status DockerClient::Ping() const {
  FP_ASSIGN_OR_RETURN(HttpResponse response, Request("GET", "/_ping"));
  if (response.status != 200) {
    return DaemonNotRunning(absl::StrCat("ping answered HTTP ", response.status));
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> DockerClient::InspectContainer(
    absl::string_view name) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("GET", absl::StrCat("/containers/", UrlEncode(name), "/json")));
  if (response.status == 404) {
    return absl::NotFoundError(absl::StrCat("no container named ", name));
  }
  if (response.status != 200) {
    return HttpError(response, absl::StrCat("inspect container ", name));
  }
  return nlohmann::json::parse(response.body);
}

absl::Status DockerClient::CreateContainer(absl::string_view name,
                                           const nlohmann::json& config) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("POST", absl::StrCat("/containers/create?name=", UrlEncode(name)),
              config.dump()));
  if (response.status == 201) return absl::OkStatus();
  if (response.status == 404) {
    return absl::NotFoundError(absl::StrCat(
        "image ", config.value("Image", std::string()),
        " not found for container ", name,
        " (build or load it first, e.g. tests/testbed/node_image.sh): ",
        DaemonMessage(response.body)));
  }
  return HttpError(response, absl::StrCat("create container ", name));
}

absl::Status DockerClient::StartContainer(absl::string_view name) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("POST", absl::StrCat("/containers/", UrlEncode(name), "/start")));
  if (response.status == 204 || response.status == 304) return absl::OkStatus();
  return HttpError(response, absl::StrCat("start container ", name));
}

absl::Status DockerClient::RemoveContainer(absl::string_view name) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("DELETE",
              absl::StrCat("/containers/", UrlEncode(name), "?force=true&v=true")));
  if (response.status == 204 || response.status == 404) return absl::OkStatus();
  return HttpError(response, absl::StrCat("remove container ", name));
}

absl::StatusOr<nlohmann::json> DockerClient::InspectNetwork(
    absl::string_view name) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("GET", absl::StrCat("/networks/", UrlEncode(name))));
  if (response.status == 404) {
    return absl::NotFoundError(absl::StrCat("no network named ", name));
  }
  if (response.status != 200) {
    return HttpError(response, absl::StrCat("inspect network ", name));
  }
  return nlohmann::json::parse(response.body);
}

absl::Status DockerClient::CreateNetwork(absl::string_view name,
                                         const nlohmann::json& labels) const {
  nlohmann::json body = {{"Name", std::string(name)},
                         {"Driver", "bridge"},
                         {"CheckDuplicate", true},
                         {"Labels", labels}};
  FP_ASSIGN_OR_RETURN(HttpResponse response,
                      Request("POST", "/networks/create", body.dump()));
  // 409: another node's Connect created it first.
  if (response.status == 201 || response.status == 409) return absl::OkStatus();
  return HttpError(response, absl::StrCat("create network ", name));
}

absl::Status DockerClient::RemoveNetwork(absl::string_view name) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("DELETE", absl::StrCat("/networks/", UrlEncode(name))));
  if (response.status == 204 || response.status == 404) return absl::OkStatus();
  return HttpError(response, absl::StrCat("remove network ", name));
}

absl::StatusOr<std::string> DockerClient::CreateExec(
    absl::string_view container, const nlohmann::json& config) const {
  std::string body;
  try {
    body = config.dump();
  } catch (const nlohmann::json::exception& e) {
    // The Engine API is JSON: strings must be UTF-8.
    return absl::InvalidArgumentError(absl::StrCat(
        "command or environment for ", container, " is not UTF-8: ", e.what()));
  }
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("POST", absl::StrCat("/containers/", UrlEncode(container), "/exec"),
              body));
  if (response.status == 404 || response.status == 409) {
    return absl::UnavailableError(absl::StrCat(
        "node ", container, ": container is gone or not running: ",
        DaemonMessage(response.body)));
  }
  if (response.status != 201) {
    return HttpError(response, absl::StrCat("exec in ", container));
  }
  return nlohmann::json::parse(response.body).at("Id").get<std::string>();
}

absl::StatusOr<nlohmann::json> DockerClient::InspectExec(
    absl::string_view id) const {
  FP_ASSIGN_OR_RETURN(HttpResponse response,
                      Request("GET", absl::StrCat("/exec/", id, "/json")));
  if (response.status != 200) {
    return HttpError(response, absl::StrCat("inspect exec ", id));
  }
  return nlohmann::json::parse(response.body);
}

absl::Status DockerClient::PutArchive(absl::string_view container,
                                      absl::string_view path,
                                      absl::string_view tar) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("PUT",
              absl::StrCat("/containers/", UrlEncode(container),
                           "/archive?path=", UrlEncode(path)),
              tar, "application/x-tar"));
  if (response.status == 200) return absl::OkStatus();
  if (response.status == 404) {
    if (absl::StrContains(DaemonMessage(response.body), "No such container")) {
      return absl::UnavailableError(
          absl::StrCat("node ", container, ": container is gone"));
    }
    return absl::NotFoundError(
        absl::StrCat("no directory ", path, " on node ", container));
  }
  return HttpError(response,
                   absl::StrCat("copy files to ", container, ":", path));
}

absl::StatusOr<std::string> DockerClient::GetArchive(
    absl::string_view container, absl::string_view path) const {
  FP_ASSIGN_OR_RETURN(
      HttpResponse response,
      Request("GET", absl::StrCat("/containers/", UrlEncode(container),
                                  "/archive?path=", UrlEncode(path))));
  if (response.status == 200) return std::move(response.body);
  if (response.status == 404) {
    // 404 means either the container or the path; say which.
    if (absl::StrContains(DaemonMessage(response.body), "No such container")) {
      return absl::UnavailableError(
          absl::StrCat("node ", container, ": container is gone"));
    }
    return absl::NotFoundError(
        absl::StrCat("no file ", path, " on node ", container));
  }
  return HttpError(response,
                   absl::StrCat("copy files from ", container, ":", path));
}

std::string UrlEncode(absl::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace fleetplan
