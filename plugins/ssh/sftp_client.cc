#include "plugins/ssh/sftp_client.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "plugins/ssh/sftp_wire.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

using sftp::PacketReader;
using sftp::PacketWriter;

// A server that stops answering for this long counts as lost.
constexpr int kReplyTimeoutMs = 120 * 1000;
// Well under OpenSSH's 256 KiB packet limit.
constexpr size_t kChunk = 128 * 1024;

// A name beside `path` that no other writer uses.
std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return absl::StrCat(dir, ".", base, ".fp-tmp.", getpid(), ".", counter++);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SftpClient>> SftpClient::Start(ssh_session session,
                                                              std::string node) {
  ssh_channel channel = ssh_channel_new(session);
  if (channel == nullptr || ssh_channel_open_session(channel) != SSH_OK ||
      ssh_channel_request_subsystem(channel, "sftp") != SSH_OK) {
    absl::Status status = absl::UnavailableError(absl::StrCat(
        "node \"", node, "\": cannot start SFTP: ", ssh_get_error(session)));
    if (channel != nullptr) ssh_channel_free(channel);
    return status;
  }
  std::unique_ptr<SftpClient> client(new SftpClient(channel, std::move(node)));
  FP_RETURN_IF_ERROR(client->Handshake());
  return client;
}

SftpClient::~SftpClient() {
  ssh_channel_close(channel_);
  ssh_channel_free(channel_);
}

absl::Status SftpClient::ConnectionLost(absl::string_view doing) const {
  return absl::UnavailableError(
      absl::StrCat("node \"", node_, "\": connection lost while ", doing, ": ",
                   ssh_get_error(ssh_channel_get_session(channel_))));
}

absl::Status SftpClient::Send(const std::string& packet) {
  size_t sent = 0;
  while (sent < packet.size()) {
    int n = ssh_channel_write(channel_, packet.data() + sent,
                              static_cast<uint32_t>(packet.size() - sent));
    if (n < 0) return ConnectionLost("sending an SFTP request");
    sent += n;
  }
  return absl::OkStatus();
}

absl::Status SftpClient::Handshake() {
  FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kInit).U32(3).Finish()));
  // The VERSION reply carries no id; it is filed under 0, which requests
  // never use.
  FP_ASSIGN_OR_RETURN(Reply version, Await(0));
  if (version.type != sftp::kVersion) {
    return absl::InternalError(absl::StrCat("node \"", node_, "\": SFTP server sent ",
                                            version.type, " instead of its version"));
  }
  PacketReader reader(version.body);
  while (reader.ok()) {
    absl::string_view name = reader.String();
    reader.String();
    if (reader.ok() && name == "posix-rename@openssh.com") posix_rename_ = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<SftpClient::Reply> SftpClient::Await(uint32_t id) {
  char buffer[64 * 1024];
  while (true) {
    auto found = replies_.find(id);
    if (found != replies_.end()) {
      Reply reply = std::move(found->second);
      replies_.erase(found);
      return reply;
    }
    // File every complete packet in the inbox.
    while (inbox_.size() >= 4 && inbox_.size() >= 4 + sftp::PeekLength(inbox_)) {
      uint32_t length = sftp::PeekLength(inbox_);
      PacketReader reader(absl::string_view(inbox_).substr(4, length));
      Reply reply;
      reply.type = reader.U8();
      uint32_t reply_id = reply.type == sftp::kVersion ? 0 : reader.U32();
      size_t header = reply.type == sftp::kVersion ? 1 : 5;
      reply.body = inbox_.substr(4 + header, length - std::min<size_t>(length, header));
      replies_[reply_id] = std::move(reply);
      inbox_.erase(0, 4 + length);
    }
    if (replies_.count(id) > 0) continue;
    int n = ssh_channel_read_timeout(channel_, buffer, sizeof(buffer), 0, kReplyTimeoutMs);
    if (n < 0) return ConnectionLost("awaiting an SFTP reply");
    if (n == 0) {
      if (ssh_channel_is_eof(channel_)) return ConnectionLost("the SFTP server closed");
      return absl::UnavailableError(
          absl::StrCat("node \"", node_, "\": SFTP server did not answer in ",
                       kReplyTimeoutMs / 1000, "s"));
    }
    inbox_.append(buffer, n);
  }
}

absl::Status SftpClient::CheckStatus(const Reply& reply, absl::string_view what) const {
  if (reply.type != sftp::kStatus) {
    return absl::InternalError(absl::StrCat("node \"", node_, "\": ", what,
                                            ": unexpected SFTP reply ", reply.type));
  }
  PacketReader reader(reply.body);
  uint32_t code = reader.U32();
  std::string message(reader.String());
  if (code == sftp::kOk) return absl::OkStatus();
  std::string text = absl::StrCat("node \"", node_, "\": ", what, ": ",
                                  message.empty() ? "failed" : message);
  switch (code) {
    case sftp::kNoSuchFile:
      return absl::NotFoundError(text);
    case sftp::kPermissionDenied:
      return absl::PermissionDeniedError(text);
    default:
      return absl::InternalError(text);
  }
}

absl::StatusOr<std::string> SftpClient::AwaitHandle(uint32_t id, absl::string_view what) {
  FP_ASSIGN_OR_RETURN(Reply reply, Await(id));
  if (reply.type == sftp::kHandle) {
    PacketReader reader(reply.body);
    return std::string(reader.String());
  }
  FP_RETURN_IF_ERROR(CheckStatus(reply, what));
  return absl::InternalError(absl::StrCat("node \"", node_, "\": ", what, ": no handle"));
}

absl::StatusOr<std::string> SftpClient::ReadFile(const std::string& path) {
  std::string what = absl::StrCat("cannot read ", path);
  uint32_t open_id = NextId();
  FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kOpen)
                              .U32(open_id)
                              .String(path)
                              .U32(sftp::kOpenRead)
                              .Attrs(std::nullopt)
                              .Finish()));
  FP_ASSIGN_OR_RETURN(std::string handle, AwaitHandle(open_id, what));
  std::string content;
  absl::Status status;
  while (status.ok()) {
    uint32_t id = NextId();
    status = Send(PacketWriter(sftp::kRead)
                      .U32(id)
                      .String(handle)
                      .U64(content.size())
                      .U32(kChunk)
                      .Finish());
    if (!status.ok()) break;
    absl::StatusOr<Reply> reply = Await(id);
    if (!reply.ok()) return reply.status();
    if (reply->type != sftp::kData) {
      PacketReader reader(reply->body);
      if (reply->type == sftp::kStatus && reader.U32() == sftp::kEof) break;
      status = CheckStatus(*reply, what);
      break;
    }
    PacketReader reader(reply->body);
    absl::string_view data = reader.String();
    content.append(data.data(), data.size());
  }
  uint32_t close_id = NextId();
  FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kClose).U32(close_id).String(handle).Finish()));
  FP_ASSIGN_OR_RETURN(Reply closed, Await(close_id));
  FP_RETURN_IF_ERROR(status);
  FP_RETURN_IF_ERROR(CheckStatus(closed, what));
  return content;
}

void SftpClient::QueueMakeDirs(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    uint32_t id = NextId();
    // A failed send shows again, with context, on the next awaited request.
    if (!Send(PacketWriter(sftp::kMkdir).U32(id).String(dir).Attrs(std::nullopt).Finish())
             .ok()) {
      return;
    }
    ignored_.push_back(id);
  }
}

absl::Status SftpClient::Upload(const std::vector<SftpUpload>& uploads) {
  // Opens first: writes need the handles.
  std::vector<std::string> temps;
  std::vector<uint32_t> open_ids;
  for (const SftpUpload& upload : uploads) {
    temps.push_back(TempPathFor(upload.remote_path));
    open_ids.push_back(NextId());
    FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kOpen)
                                .U32(open_ids.back())
                                .String(temps.back())
                                .U32(sftp::kOpenWrite | sftp::kOpenCreate | sftp::kOpenTruncate)
                                .Attrs(upload.mode & 07777)
                                .Finish()));
  }
  for (uint32_t id : ignored_) FP_RETURN_IF_ERROR(Await(id).status());
  ignored_.clear();
  absl::Status first_error;
  std::vector<std::pair<uint32_t, std::string>> pending;  // id, what
  for (size_t i = 0; i < uploads.size(); ++i) {
    const SftpUpload& upload = uploads[i];
    std::string what = absl::StrCat("cannot write ", upload.remote_path);
    absl::StatusOr<std::string> handle = AwaitHandle(open_ids[i], what);
    if (!handle.ok()) {
      if (absl::IsUnavailable(handle.status())) return handle.status();
      first_error.Update(handle.status());
      continue;
    }
    for (size_t offset = 0; offset < upload.content.size() || offset == 0; offset += kChunk) {
      if (upload.content.empty()) break;
      absl::string_view chunk = absl::string_view(upload.content).substr(offset, kChunk);
      pending.emplace_back(NextId(), what);
      FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kWrite)
                                  .U32(pending.back().first)
                                  .String(*handle)
                                  .U64(offset)
                                  .String(chunk)
                                  .Finish()));
    }
    // The exact mode, whatever the server's umask did to the create.
    pending.emplace_back(NextId(), what);
    FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kFsetstat)
                                .U32(pending.back().first)
                                .String(*handle)
                                .Attrs(upload.mode & 07777)
                                .Finish()));
    pending.emplace_back(NextId(), what);
    FP_RETURN_IF_ERROR(
        Send(PacketWriter(sftp::kClose).U32(pending.back().first).String(*handle).Finish()));
    if (posix_rename_) {
      pending.emplace_back(NextId(), what);
      FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kExtended)
                                  .U32(pending.back().first)
                                  .String("posix-rename@openssh.com")
                                  .String(temps[i])
                                  .String(upload.remote_path)
                                  .Finish()));
    } else {
      // SFTP v3's rename refuses an existing target.
      uint32_t remove_id = NextId();
      FP_RETURN_IF_ERROR(Send(
          PacketWriter(sftp::kRemove).U32(remove_id).String(upload.remote_path).Finish()));
      ignored_.push_back(remove_id);
      pending.emplace_back(NextId(), what);
      FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kRename)
                                  .U32(pending.back().first)
                                  .String(temps[i])
                                  .String(upload.remote_path)
                                  .Finish()));
    }
  }
  for (const auto& [id, what] : pending) {
    FP_ASSIGN_OR_RETURN(Reply reply, Await(id));
    first_error.Update(CheckStatus(reply, what));
  }
  for (uint32_t id : ignored_) FP_RETURN_IF_ERROR(Await(id).status());
  ignored_.clear();
  return first_error;
}

absl::Status SftpClient::Remove(const std::vector<std::string>& paths) {
  std::vector<uint32_t> ids;
  for (const std::string& path : paths) {
    ids.push_back(NextId());
    FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kRemove).U32(ids.back()).String(path).Finish()));
  }
  absl::Status first_error;
  for (size_t i = 0; i < paths.size(); ++i) {
    FP_ASSIGN_OR_RETURN(Reply reply, Await(ids[i]));
    absl::Status status = CheckStatus(reply, absl::StrCat("cannot remove ", paths[i]));
    if (!absl::IsNotFound(status)) first_error.Update(status);
  }
  return first_error;
}

}  // namespace fleetplan
