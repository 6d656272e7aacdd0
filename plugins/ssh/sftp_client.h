#ifndef FLEETPLAN_PLUGINS_SSH_SFTP_CLIENT_H_
#define FLEETPLAN_PLUGINS_SSH_SFTP_CLIENT_H_

// A pipelined SFTP v3 client on one channel of a libssh session: many
// requests go out before their replies are read, so uploading a tree costs
// about one round trip in all rather than several per file, and reading a
// small file two. What is in flight is bounded, so a tree of any size
// streams through in constant memory. Used by one thread at a time, like
// the session it runs on.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <libssh/libssh.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// A file to create or replace on the node: `content`, or when `local_path`
// is set, that file of this machine, read as it is sent.
struct SftpUpload {
  std::string remote_path;
  std::string content;
  uint32_t mode = 0644;
  std::string local_path;
};

class SftpClient {
 public:
  // Starts the "sftp" subsystem on `session`. `node` names the node in
  // errors. Unavailable when the channel cannot be opened.
  static absl::StatusOr<std::unique_ptr<SftpClient>> Start(ssh_session session,
                                                           std::string node);
  ~SftpClient();
  SftpClient(const SftpClient&) = delete;
  SftpClient& operator=(const SftpClient&) = delete;

  // The file's content. NotFound when it does not exist.
  absl::StatusOr<std::string> ReadFile(const std::string& path);

  // Each file's content, as ReadFile gives it. Every open goes out before
  // the first reply is awaited, then a read of each, so small files cost
  // two round trips in all; a file longer than one read goes on with
  // ReadFile.
  std::vector<absl::StatusOr<std::string>> ReadFiles(const std::vector<std::string>& paths);

  // Creates `dirs` in order, ignoring failures (most are "exists"); a real
  // failure surfaces when a file inside cannot be opened. Pipelined with
  // nothing awaited, so it costs no round trip by itself.
  void QueueMakeDirs(const std::vector<std::string>& dirs);

  // Writes each upload to a temporary file beside it with its exact mode,
  // then renames it into place (POSIX rename when the server offers it).
  // One pipelined stream: opens run ahead of the data and a bounded amount
  // of data awaits acknowledgement, so the server never waits for the next
  // request and nothing piles up between. Awaits everything queued before
  // it too. A file that fails (NotFound for a local file that cannot be
  // read) is skipped and the first such error returned after the rest.
  absl::Status Upload(const std::vector<SftpUpload>& uploads);

  // Removes files; missing ones are fine.
  absl::Status Remove(const std::vector<std::string>& paths);

 private:
  struct Reply {
    uint8_t type = 0;
    std::string body;  // after the request id
  };

  SftpClient(ssh_channel channel, std::string node)
      : channel_(channel), node_(std::move(node)) {}

  absl::Status Handshake();
  uint32_t NextId() { return next_id_++; }
  absl::Status Send(const std::string& packet);
  absl::StatusOr<Reply> Await(uint32_t id);
  // OK for an SSH_FX_OK status reply, else an error naming `what`.
  absl::Status CheckStatus(const Reply& reply, absl::string_view what) const;
  absl::Status ConnectionLost(absl::string_view doing) const;
  absl::StatusOr<std::string> AwaitHandle(uint32_t id, absl::string_view what);
  // Upload's steps; UploadRun holds one call's state.
  struct UploadRun;
  // Reads the oldest reply in the window; a failed request is kept in
  // run.first_error for the end.
  absl::Status SettleOldest(UploadRun& run);
  // Sends request `id` of upload `upload`, carrying `bytes` of data, once
  // the window has room for it.
  absl::Status SendCounted(UploadRun& run, size_t upload, uint32_t id, size_t bytes,
                           const std::string& packet);
  // Sends a request whose reply does not matter.
  absl::Status SendIgnored(uint32_t id, const std::string& packet);
  absl::Status SendOpensUntil(UploadRun& run, size_t end);
  // Errors are the connection's; a local file that cannot be read is
  // `*read_status`.
  absl::Status SendData(UploadRun& run, size_t i, const std::string& handle,
                        absl::Status* read_status);
  absl::Status AbandonFile(UploadRun& run, size_t i, const std::string& handle);
  absl::Status CommitFile(UploadRun& run, size_t i, const std::string& handle);
  // Reads the replies to the requests in ignored_. Callers send a request
  // of their own first: its reply comes after those, so this adds no wait.
  absl::Status AwaitIgnored();

  ssh_channel channel_;
  std::string node_;
  uint32_t next_id_ = 1;
  std::vector<uint32_t> ignored_;  // queued requests whose replies don't matter
  std::string inbox_;              // bytes read but not yet parsed
  std::map<uint32_t, Reply> replies_;
  bool posix_rename_ = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SFTP_CLIENT_H_
