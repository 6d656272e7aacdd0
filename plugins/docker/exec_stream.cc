#include "plugins/docker/exec_stream.h"

#include <curl/curl.h>
#include <poll.h>
#include <sys/socket.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugins/docker/curl_api.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr size_t kMaxHeaderBytes = 64 * 1024;

int WaitFor(int fd, short events, absl::Duration timeout) {
  struct pollfd p = {fd, events, 0};
  int ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  return poll(&p, 1, ms < 0 ? 0 : ms);
}

absl::Status SendAll(const CurlApi& api, CURL* curl, int fd, absl::string_view data,
                     const std::string& node) {
  while (!data.empty()) {
    size_t sent = 0;
    CURLcode code = api.easy_send(curl, data.data(), data.size(), &sent);
    if (code == CURLE_AGAIN) {
      WaitFor(fd, POLLOUT, absl::Seconds(1));
      continue;
    }
    if (code != CURLE_OK) {
      return absl::UnavailableError(absl::StrCat(
          "node ", node, ": exec start: ", api.easy_strerror(code)));
    }
    data.remove_prefix(sent);
  }
  return absl::OkStatus();
}

}  // namespace

ExecStream::ExecStream(const CurlApi* api, void* curl, int fd, std::string node)
    : api_(api),
      curl_(curl),
      fd_(fd),
      node_(std::move(node)),
      demuxer_([this](int, absl::string_view payload) {
        if (on_output_ != nullptr && *on_output_) (*on_output_)(payload);
      }) {}

ExecStream::~ExecStream() { api_->easy_cleanup(static_cast<CURL*>(curl_)); }

absl::StatusOr<std::unique_ptr<ExecStream>> ExecStream::Start(
    const DockerClient& client, const std::string& exec_id,
    const std::string& node) {
  FP_ASSIGN_OR_RETURN(const CurlApi* api, Curl());
  CURL* curl = api->easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::unique_ptr<ExecStream> stream(new ExecStream(api, curl, -1, node));
  api->easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH,
                   client.socket_path().c_str());
  api->easy_setopt(curl, CURLOPT_URL, "http://docker/");
  api->easy_setopt(curl, CURLOPT_CONNECT_ONLY, 1L);
  api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  CURLcode code = api->easy_perform(curl);
  if (code == CURLE_COULDNT_CONNECT) {
    return client.DaemonNotRunning(api->easy_strerror(code));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(
        "node ", node, ": exec start: ", api->easy_strerror(code)));
  }
  curl_socket_t fd = CURL_SOCKET_BAD;
  api->easy_getinfo(curl, CURLINFO_ACTIVESOCKET, &fd);
  stream->fd_ = fd;

  // The Engine API upgrades this request to a raw stream (101) that carries
  // stdin one way and framed stdout/stderr the other.
  std::string body = R"({"Detach":false,"Tty":false})";
  std::string request = absl::StrCat(
      "POST /", kDockerApiVersion, "/exec/", exec_id,
      "/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
      "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: ",
      body.size(), "\r\n\r\n", body);
  FP_RETURN_IF_ERROR(SendAll(*api, curl, fd, request, node));

  std::string head;
  size_t end;
  while ((end = head.find("\r\n\r\n")) == std::string::npos) {
    if (head.size() > kMaxHeaderBytes) {
      return absl::InternalError("exec start: oversized response headers");
    }
    char buffer[4096];
    size_t n = 0;
    code = api->easy_recv(curl, buffer, sizeof buffer, &n);
    if (code == CURLE_AGAIN) {
      WaitFor(fd, POLLIN, absl::Seconds(1));
      continue;
    }
    if (code != CURLE_OK || n == 0) {
      return absl::UnavailableError(absl::StrCat(
          "node ", node, ": exec start: connection closed before a response"));
    }
    head.append(buffer, n);
  }
  stream->early_ = head.substr(end + 4);
  head.resize(end);
  if (!absl::StartsWith(head, "HTTP/1.1 101") &&
      !absl::StartsWith(head, "HTTP/1.1 200")) {
    std::string status_line = head.substr(0, head.find("\r\n"));
    // A container removed between exec create and start lands here.
    return absl::UnavailableError(absl::StrCat("node ", node,
                                               ": exec start refused: ",
                                               status_line, " ",
                                               stream->early_));
  }
  return stream;
}

absl::StatusOr<bool> ExecStream::Pump(absl::Duration timeout,
                                      const OutputCallback& on_output) {
  on_output_ = &on_output;
  if (!early_.empty()) {
    demuxer_.Feed(early_);
    early_.clear();
  }
  if (WaitFor(fd_, POLLIN, timeout) <= 0) return false;
  CURL* curl = static_cast<CURL*>(curl_);
  // Drain what is there; CURLE_AGAIN ends this round.
  for (;;) {
    char buffer[1 << 16];
    size_t n = 0;
    CURLcode code = api_->easy_recv(curl, buffer, sizeof buffer, &n);
    if (code == CURLE_AGAIN) return false;
    if (code != CURLE_OK) {
      return absl::UnavailableError(absl::StrCat(
          "node ", node_, ": exec output: ", api_->easy_strerror(code)));
    }
    if (n == 0) return true;
    demuxer_.Feed(absl::string_view(buffer, n));
  }
}

void ExecStream::CloseStdin() {
  if (stdin_closed_ || fd_ < 0) return;
  stdin_closed_ = true;
  shutdown(fd_, SHUT_WR);
}

}  // namespace fleetplan
