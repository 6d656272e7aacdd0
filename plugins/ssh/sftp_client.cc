#include "plugins/ssh/sftp_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>

#include "absl/strings/str_cat.h"
#include "plugins/ssh/libssh_api.h"
#include "plugins/ssh/sftp_wire.h"
#include "plugins/ssh/upload_window.h"
#include "tools/util/path_policy.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

using sftp::PacketReader;
using sftp::PacketWriter;

// A server that stops answering for this long counts as lost.
constexpr int kReplyTimeoutMs = 120 * 1000;
// Well under OpenSSH's 256 KiB packet limit.
constexpr size_t kChunk = 128 * 1024;
// Upload data sent but not yet acknowledged, at most: two chunks, so the
// server always has the next one. More only waits in sshd's channel buffer,
// which OpenSSH compacts by copying it: a 40 MB tree to 8 nodes on a busy
// 2-core host took 5-7 s at 256 KiB, 10-15 s at 1 MiB, 30-45 s at 4 MiB.
constexpr size_t kMaxInFlight = 256 << 10;
// Requests awaiting a reply, at most: bounds what waits in both directions
// when the files are small.
constexpr size_t kMaxPending = 1024;
// Files opened ahead of the one being written, so that its handle is back
// when its turn comes.
constexpr size_t kOpensAhead = 64;
// Chunks requested ahead when reading a file.
constexpr size_t kReadsAhead = 8;

// A name beside `path` that no other writer uses.
std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return HiddenBeside(path, absl::StrCat(".fp-tmp.", getpid(), ".", counter++));
}

// A file of this machine, read in chunks as it is uploaded.
class LocalFile {
 public:
  explicit LocalFile(const std::string& path) : path_(path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd_ < 0 || fstat(fd_, &st) != 0) {
      status_ = absl::NotFoundError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    } else {
      size_ = st.st_size;
    }
  }
  ~LocalFile() {
    if (fd_ >= 0) close(fd_);
  }
  LocalFile(const LocalFile&) = delete;
  LocalFile& operator=(const LocalFile&) = delete;

  const absl::Status& status() const { return status_; }
  uint64_t size() const { return size_; }

  // Exactly `size` bytes from `offset`.
  absl::Status ReadAt(uint64_t offset, char* out, size_t size) {
    while (size > 0) {
      ssize_t n = pread(fd_, out, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return absl::InternalError(
            absl::StrCat("cannot read ", path_, ": ", std::strerror(errno)));
      }
      if (n == 0) return absl::InternalError(absl::StrCat(path_, " shrank while being sent"));
      out += n;
      offset += n;
      size -= n;
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SftpClient>> SftpClient::Start(ssh_session session,
                                                              std::string node) {
  ssh_channel channel = Libssh().channel_new(session);
  if (channel == nullptr || Libssh().channel_open_session(channel) != SSH_OK ||
      Libssh().channel_request_subsystem(channel, "sftp") != SSH_OK) {
    absl::Status status = absl::UnavailableError(absl::StrCat(
        "node \"", node, "\": cannot start SFTP: ", Libssh().get_error(session)));
    if (channel != nullptr) Libssh().channel_free(channel);
    return status;
  }
  std::unique_ptr<SftpClient> client(new SftpClient(channel, std::move(node)));
  FP_RETURN_IF_ERROR(client->Handshake());
  return client;
}

SftpClient::~SftpClient() {
  Libssh().channel_close(channel_);
  Libssh().channel_free(channel_);
}

absl::Status SftpClient::ConnectionLost(absl::string_view doing) const {
  return absl::UnavailableError(
      absl::StrCat("node \"", node_, "\": connection lost while ", doing, ": ",
                   Libssh().get_error(Libssh().channel_get_session(channel_))));
}

absl::Status SftpClient::Send(const std::string& packet) {
  size_t sent = 0;
  while (sent < packet.size()) {
    int n = Libssh().channel_write(channel_, packet.data() + sent,
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
  reader.U32();  // the server's protocol version; extension pairs follow
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
    int n = Libssh().channel_read_timeout(channel_, buffer, sizeof(buffer), 0, kReplyTimeoutMs);
    if (n < 0) return ConnectionLost("awaiting an SFTP reply");
    if (n == 0) {
      if (Libssh().channel_is_eof(channel_)) return ConnectionLost("the SFTP server closed");
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

absl::Status SftpClient::AwaitIgnored() {
  for (uint32_t id : ignored_) FP_RETURN_IF_ERROR(Await(id).status());
  ignored_.clear();
  return absl::OkStatus();
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
  FP_RETURN_IF_ERROR(AwaitIgnored());
  FP_ASSIGN_OR_RETURN(std::string handle, AwaitHandle(open_id, what));
  // Reads run kReadsAhead chunks ahead of the one awaited, so a file of up
  // to that many chunks (a sync manifest) arrives in one round trip.
  std::deque<uint32_t> reads;  // ids, for consecutive chunks from content's end
  std::string content;
  absl::Status status;
  bool eof = false;
  while (status.ok() && !eof) {
    uint64_t offset = content.size() + reads.size() * kChunk;
    while (status.ok() && reads.size() < kReadsAhead) {
      reads.push_back(NextId());
      status = Send(PacketWriter(sftp::kRead)
                        .U32(reads.back())
                        .String(handle)
                        .U64(offset)
                        .U32(kChunk)
                        .Finish());
      offset += kChunk;
    }
    if (!status.ok()) break;
    FP_ASSIGN_OR_RETURN(Reply reply, Await(reads.front()));
    reads.pop_front();
    PacketReader reader(reply.body);
    if (reply.type == sftp::kStatus && reader.U32() == sftp::kEof) {
      eof = true;
    } else if (reply.type != sftp::kData) {
      status = CheckStatus(reply, what);
    } else {
      absl::string_view data = reader.String();
      content.append(data.data(), data.size());
      if (data.size() < kChunk && !reads.empty()) {
        // The reads sent past a short one asked for the wrong offsets. One
        // that meets the end means the short one was the last; otherwise
        // read on from where the data stopped.
        FP_ASSIGN_OR_RETURN(Reply next, Await(reads.front()));
        reads.pop_front();
        PacketReader next_reader(next.body);
        eof = next.type == sftp::kStatus && next_reader.U32() == sftp::kEof;
        for (uint32_t id : reads) FP_RETURN_IF_ERROR(Await(id).status());
        reads.clear();
      }
    }
  }
  for (uint32_t id : reads) FP_RETURN_IF_ERROR(Await(id).status());
  // Reading needs nothing from the close: its reply is read with the next
  // request's, which saves a round trip per read.
  uint32_t close_id = NextId();
  FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kClose).U32(close_id).String(handle).Finish()));
  ignored_.push_back(close_id);
  FP_RETURN_IF_ERROR(status);
  return content;
}

std::vector<absl::StatusOr<std::string>> SftpClient::ReadFiles(
    const std::vector<std::string>& paths) {
  std::vector<absl::StatusOr<std::string>> contents(paths.size(), std::string());
  auto what = [&](size_t i) { return absl::StrCat("cannot read ", paths[i]); };
  auto fail_all = [&](const absl::Status& status) {
    for (auto& content : contents) content = status;
    return contents;
  };
  std::vector<uint32_t> opens;
  for (const std::string& path : paths) {
    opens.push_back(NextId());
    absl::Status sent = Send(PacketWriter(sftp::kOpen)
                                 .U32(opens.back())
                                 .String(path)
                                 .U32(sftp::kOpenRead)
                                 .Attrs(std::nullopt)
                                 .Finish());
    if (!sent.ok()) return fail_all(sent);
  }
  if (absl::Status awaited = AwaitIgnored(); !awaited.ok()) return fail_all(awaited);
  // Each handle as it comes, and at once a read of its first chunk.
  std::vector<std::string> handles(paths.size());
  std::vector<uint32_t> reads(paths.size(), 0);
  for (size_t i = 0; i < paths.size(); ++i) {
    absl::StatusOr<std::string> handle = AwaitHandle(opens[i], what(i));
    if (!handle.ok()) {
      if (absl::IsUnavailable(handle.status())) return fail_all(handle.status());
      contents[i] = handle.status();
      continue;
    }
    handles[i] = *std::move(handle);
    reads[i] = NextId();
    absl::Status sent = Send(
        PacketWriter(sftp::kRead).U32(reads[i]).String(handles[i]).U64(0).U32(kChunk).Finish());
    if (!sent.ok()) return fail_all(sent);
  }
  std::vector<size_t> longer;  // files with more than one chunk
  for (size_t i = 0; i < paths.size(); ++i) {
    if (reads[i] == 0) continue;
    absl::StatusOr<Reply> reply = Await(reads[i]);
    if (!reply.ok()) return fail_all(reply.status());
    PacketReader reader(reply->body);
    if (reply->type == sftp::kStatus && reader.U32() == sftp::kEof) {
      // empty file: contents[i] stays ""
    } else if (reply->type != sftp::kData) {
      contents[i] = CheckStatus(*reply, what(i));
    } else {
      absl::string_view data = reader.String();
      contents[i] = std::string(data);
      if (data.size() >= kChunk / 2) longer.push_back(i);
    }
    uint32_t close_id = NextId();
    absl::Status sent =
        Send(PacketWriter(sftp::kClose).U32(close_id).String(handles[i]).Finish());
    if (!sent.ok()) return fail_all(sent);
    ignored_.push_back(close_id);
  }
  // Rare for what this reads (records): read those whole, again.
  for (size_t i : longer) contents[i] = ReadFile(paths[i]);
  return contents;
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

// One Upload call's state.
struct SftpClient::UploadRun {
  explicit UploadRun(const std::vector<SftpUpload>& uploads)
      : uploads(uploads), window(kMaxInFlight, kMaxPending) {}

  std::string What(size_t i) const {
    return absl::StrCat("cannot write ", uploads[i].remote_path);
  }

  const std::vector<SftpUpload>& uploads;
  UploadWindow window;       // sent, reply not read yet
  absl::Status first_error;  // of a file that failed; the others go on
  std::vector<std::string> temps;  // per upload opened so far
  std::vector<uint32_t> open_ids;  // the same
};

absl::Status SftpClient::Upload(const std::vector<SftpUpload>& uploads) {
  UploadRun run(uploads);
  FP_RETURN_IF_ERROR(SendOpensUntil(run, kOpensAhead));
  FP_RETURN_IF_ERROR(AwaitIgnored());
  for (size_t i = 0; i < uploads.size(); ++i) {
    FP_RETURN_IF_ERROR(SendOpensUntil(run, i + 1 + kOpensAhead));
    absl::StatusOr<std::string> handle = AwaitHandle(run.open_ids[i], run.What(i));
    if (!handle.ok()) {
      if (absl::IsUnavailable(handle.status())) return handle.status();
      run.first_error.Update(handle.status());
      continue;
    }
    absl::Status read_status;
    FP_RETURN_IF_ERROR(SendData(run, i, *handle, &read_status));
    if (!read_status.ok()) {
      FP_RETURN_IF_ERROR(AbandonFile(run, i, *handle));
      run.first_error.Update(read_status);
      continue;
    }
    FP_RETURN_IF_ERROR(CommitFile(run, i, *handle));
  }
  while (!run.window.empty()) FP_RETURN_IF_ERROR(SettleOldest(run));
  FP_RETURN_IF_ERROR(AwaitIgnored());
  return run.first_error;
}

absl::Status SftpClient::SettleOldest(UploadRun& run) {
  UploadWindow::Request oldest = run.window.TakeOldest();
  FP_ASSIGN_OR_RETURN(Reply reply, Await(oldest.id));
  run.first_error.Update(CheckStatus(reply, run.What(oldest.upload)));
  return absl::OkStatus();
}

absl::Status SftpClient::SendCounted(UploadRun& run, size_t upload, uint32_t id, size_t bytes,
                                     const std::string& packet) {
  while (run.window.MustWaitFor(bytes)) FP_RETURN_IF_ERROR(SettleOldest(run));
  FP_RETURN_IF_ERROR(Send(packet));
  run.window.Add({id, upload, bytes});
  return absl::OkStatus();
}

absl::Status SftpClient::SendIgnored(uint32_t id, const std::string& packet) {
  FP_RETURN_IF_ERROR(Send(packet));
  ignored_.push_back(id);
  return absl::OkStatus();
}

// Opens run ahead of the data, so each handle is back when its file's turn
// comes and the server always has the next file to create.
absl::Status SftpClient::SendOpensUntil(UploadRun& run, size_t end) {
  end = std::min(end, run.uploads.size());
  while (run.open_ids.size() < end) {
    const SftpUpload& upload = run.uploads[run.open_ids.size()];
    run.temps.push_back(TempPathFor(upload.remote_path));
    run.open_ids.push_back(NextId());
    FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kOpen)
                                .U32(run.open_ids.back())
                                .String(run.temps.back())
                                .U32(sftp::kOpenWrite | sftp::kOpenCreate | sftp::kOpenTruncate)
                                .Attrs(upload.mode & 07777)
                                .Finish()));
  }
  return absl::OkStatus();
}

// The data, from memory or read from the local file chunk by chunk straight
// into the WRITE packets.
absl::Status SftpClient::SendData(UploadRun& run, size_t i, const std::string& handle,
                                  absl::Status* read_status) {
  const SftpUpload& upload = run.uploads[i];
  if (upload.local_path.empty()) {
    for (size_t offset = 0; offset < upload.content.size(); offset += kChunk) {
      absl::string_view chunk = absl::string_view(upload.content).substr(offset, kChunk);
      uint32_t id = NextId();
      FP_RETURN_IF_ERROR(SendCounted(
          run, i, id, chunk.size(),
          PacketWriter(sftp::kWrite).U32(id).String(handle).U64(offset).String(chunk).Finish()));
    }
    return absl::OkStatus();
  }
  LocalFile file(upload.local_path);
  *read_status = file.status();
  for (uint64_t offset = 0; read_status->ok() && offset < file.size(); offset += kChunk) {
    uint32_t size = static_cast<uint32_t>(std::min<uint64_t>(kChunk, file.size() - offset));
    uint32_t id = NextId();
    PacketWriter packet(sftp::kWrite);
    packet.U32(id).String(handle).U64(offset);
    *read_status = file.ReadAt(offset, packet.StringSpace(size), size);
    if (read_status->ok()) FP_RETURN_IF_ERROR(SendCounted(run, i, id, size, packet.Finish()));
  }
  return absl::OkStatus();
}

// Drops the partial temporary; the target stays as it was.
absl::Status SftpClient::AbandonFile(UploadRun& run, size_t i, const std::string& handle) {
  uint32_t close_id = NextId();
  FP_RETURN_IF_ERROR(
      SendIgnored(close_id, PacketWriter(sftp::kClose).U32(close_id).String(handle).Finish()));
  uint32_t remove_id = NextId();
  return SendIgnored(remove_id,
                     PacketWriter(sftp::kRemove).U32(remove_id).String(run.temps[i]).Finish());
}

// Sets the exact mode, whatever the server's umask did to the create,
// closes the temporary and renames it into place.
absl::Status SftpClient::CommitFile(UploadRun& run, size_t i, const std::string& handle) {
  const SftpUpload& upload = run.uploads[i];
  uint32_t setstat_id = NextId();
  FP_RETURN_IF_ERROR(SendCounted(run, i, setstat_id, 0,
                                 PacketWriter(sftp::kFsetstat)
                                     .U32(setstat_id)
                                     .String(handle)
                                     .Attrs(upload.mode & 07777)
                                     .Finish()));
  uint32_t close_id = NextId();
  FP_RETURN_IF_ERROR(SendCounted(
      run, i, close_id, 0, PacketWriter(sftp::kClose).U32(close_id).String(handle).Finish()));
  if (posix_rename_) {
    uint32_t rename_id = NextId();
    return SendCounted(run, i, rename_id, 0,
                       PacketWriter(sftp::kExtended)
                           .U32(rename_id)
                           .String("posix-rename@openssh.com")
                           .String(run.temps[i])
                           .String(upload.remote_path)
                           .Finish());
  }
  // SFTP v3's rename refuses an existing target.
  uint32_t remove_id = NextId();
  FP_RETURN_IF_ERROR(SendIgnored(
      remove_id, PacketWriter(sftp::kRemove).U32(remove_id).String(upload.remote_path).Finish()));
  uint32_t rename_id = NextId();
  return SendCounted(run, i, rename_id, 0,
                     PacketWriter(sftp::kRename)
                         .U32(rename_id)
                         .String(run.temps[i])
                         .String(upload.remote_path)
                         .Finish());
}

absl::Status SftpClient::Remove(const std::vector<std::string>& paths) {
  std::deque<std::pair<uint32_t, size_t>> pending;  // id, index in paths
  absl::Status first_error;
  auto settle_oldest = [&]() -> absl::Status {
    auto [id, i] = pending.front();
    pending.pop_front();
    FP_ASSIGN_OR_RETURN(Reply reply, Await(id));
    absl::Status status = CheckStatus(reply, absl::StrCat("cannot remove ", paths[i]));
    if (!absl::IsNotFound(status)) first_error.Update(status);
    return absl::OkStatus();
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (pending.size() >= kMaxPending) FP_RETURN_IF_ERROR(settle_oldest());
    uint32_t id = NextId();
    FP_RETURN_IF_ERROR(Send(PacketWriter(sftp::kRemove).U32(id).String(paths[i]).Finish()));
    pending.emplace_back(id, i);
    if (i == 0) FP_RETURN_IF_ERROR(AwaitIgnored());
  }
  while (!pending.empty()) FP_RETURN_IF_ERROR(settle_oldest());
  return first_error;
}

}  // namespace fleetplan
