#include "tools/cli/dashboard_server.h"

#include <httplib.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tools/cli/dashboard_assets.h"

namespace fleetplan {
namespace {

constexpr char kTokenHeader[] = "X-Fleetplan-Token";

void Reply(httplib::Response& response, const nlohmann::json& body) {
  response.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                       "application/json");
}

void ReplyBadRequest(httplib::Response& response, const absl::Status& status) {
  response.status = 400;
  Reply(response, {{"error", std::string(status.message())}});
}

// Headers on every answer: nothing cached, no Referer (the URL holds the
// token), no framing by another page (a stop button clicked through a
// frame), nothing loaded from elsewhere.
void SetSafetyHeaders(httplib::Response& response) {
  response.set_header("Cache-Control", "no-store");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("X-Frame-Options", "DENY");
  response.set_header("Content-Security-Policy",
                      "default-src 'self'; connect-src 'self'; frame-ancestors 'none'");
}

}  // namespace

absl::StatusOr<std::unique_ptr<DashboardServer>> DashboardServer::Start(DashboardBackend* backend,
                                                                        int port,
                                                                        std::string token) {
  std::unique_ptr<DashboardServer> server(new DashboardServer());
  server->server_ = std::make_unique<httplib::Server>();
  server->token_ = std::move(token);
  server->port_ = port == 0 ? server->server_->bind_to_any_port("127.0.0.1")
                            : (server->server_->bind_to_port("127.0.0.1", port) ? port : -1);
  if (server->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("dashboard: cannot listen on 127.0.0.1:", port, " (in use?)"));
  }
  server->Route(backend);
  httplib::Server* http = server->server_.get();
  server->thread_ = std::thread([http] { http->listen_after_bind(); });
  return server;
}

DashboardServer::~DashboardServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string DashboardServer::url() const {
  return absl::StrCat("http://127.0.0.1:", port_, "/?token=", token_);
}

void DashboardServer::Route(DashboardBackend* backend) {
  server_->set_pre_routing_handler([this](const httplib::Request& request,
                                          httplib::Response& response) {
    SetSafetyHeaders(response);
    std::string given = request.has_header(kTokenHeader)
                            ? request.get_header_value(kTokenHeader)
                            : request.get_param_value("token");
    std::optional<Refusal> refusal =
        CheckRequest(request.get_header_value("Host"), given, token_, port_);
    if (!refusal.has_value()) return httplib::Server::HandlerResponse::Unhandled;
    response.status = refusal->status;
    response.set_content(refusal->message + "\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->Get("/", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(absl::StrReplaceAll(kDashboardHtml, {{"__TOKEN__", token_}}),
                         "text/html; charset=utf-8");
  });
  server_->Get("/dashboard.js", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(kDashboardJs, "text/javascript; charset=utf-8");
  });
  server_->Get("/dashboard.css", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(kDashboardCss, "text/css; charset=utf-8");
  });
  server_->Get("/api/top", [backend](const httplib::Request&, httplib::Response& response) {
    Reply(response, backend->Top());
  });
  server_->Get("/api/metrics", [backend](const httplib::Request& request,
                                         httplib::Response& response) {
    absl::StatusOr<uint64_t> since = ParseSince(request.get_param_value("since"));
    if (!since.ok()) return ReplyBadRequest(response, since.status());
    Reply(response, backend->output().MetricsJson(*since));
  });
  server_->Get("/api/logs", [backend](const httplib::Request& request,
                                      httplib::Response& response) {
    absl::StatusOr<LogFilter> filter =
        ParseLogFilter(request.get_param_value("node"), request.get_param_value("rank"),
                       request.get_param_value("since"));
    if (!filter.ok()) return ReplyBadRequest(response, filter.status());
    Reply(response, backend->output().LogsJson(*filter));
  });
  server_->Post("/api/stop", [backend](const httplib::Request&, httplib::Response& response) {
    Reply(response, backend->Stop());
  });
}

}  // namespace fleetplan
