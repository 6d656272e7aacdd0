#include "plugins/common/tar_stream.h"

#include <fstream>
#include <memory>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "plugins/common/archive_api.h"
#include "absl/strings/str_split.h"
#include "tools/util/path_policy.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// Frees what libarchive made, through the loaded library.
struct WriterDeleter {
  const ArchiveApi* api;
  void operator()(struct archive* a) const { api->write_free(a); }
};
struct ReaderDeleter {
  const ArchiveApi* api;
  void operator()(struct archive* a) const { api->read_free(a); }
};
struct EntryDeleter {
  const ArchiveApi* api;
  void operator()(struct archive_entry* e) const { api->entry_free(e); }
};
using Entry = std::unique_ptr<struct archive_entry, EntryDeleter>;

la_ssize_t AppendToString(struct archive*, void* out, const void* data, size_t size) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
  return static_cast<la_ssize_t>(size);
}

// A tar being written into a string.
class TarWriter {
 public:
  static absl::StatusOr<std::unique_ptr<TarWriter>> Open(std::string* out) {
    FP_ASSIGN_OR_RETURN(const ArchiveApi* api, Archive());
    auto writer = absl::WrapUnique(new TarWriter(api));
    struct archive* a = writer->archive_.get();
    // pax: paths and sizes of any length.
    api->write_set_format_pax_restricted(a);
    api->write_set_bytes_in_last_block(a, 1);
    if (api->write_open(a, out, nullptr, AppendToString, nullptr) != ARCHIVE_OK) {
      return writer->Error(absl::StatusCode::kInternal);
    }
    return writer;
  }

  // A regular file's header; its data follows with Data.
  absl::Status Header(absl::string_view path, uint32_t mode, int64_t size) {
    Entry entry(api_->entry_new(), EntryDeleter{api_});
    std::string p(path);
    api_->entry_set_pathname(entry.get(), p.c_str());
    api_->entry_set_filetype(entry.get(), AE_IFREG);
    api_->entry_set_perm(entry.get(), mode & 07777);
    api_->entry_set_size(entry.get(), size);
    api_->entry_set_uid(entry.get(), 0);
    api_->entry_set_gid(entry.get(), 0);
    api_->entry_set_mtime(entry.get(), time(nullptr), 0);
    if (api_->write_header(archive_.get(), entry.get()) != ARCHIVE_OK) {
      return Error(absl::StatusCode::kInternal);
    }
    return absl::OkStatus();
  }

  absl::Status Data(const char* data, size_t size) {
    if (size > 0 && api_->write_data(archive_.get(), data, size) < 0) {
      return Error(absl::StatusCode::kInternal);
    }
    return absl::OkStatus();
  }

  absl::Status Close() {
    if (api_->write_close(archive_.get()) != ARCHIVE_OK) return Error(absl::StatusCode::kInternal);
    return absl::OkStatus();
  }

 private:
  explicit TarWriter(const ArchiveApi* api)
      : api_(api), archive_(api->write_new(), WriterDeleter{api}) {}
  absl::Status Error(absl::StatusCode code) const {
    return absl::Status(code, absl::StrCat("tar: ", api_->error_string(archive_.get())));
  }

  const ArchiveApi* api_;
  std::unique_ptr<struct archive, WriterDeleter> archive_;
};

absl::Status AddLocalFile(TarWriter& tar, const FileToSend& file) {
  std::ifstream in(file.local_path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", file.local_path, " to send"));
  }
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  in.seekg(0);
  FP_RETURN_IF_ERROR(tar.Header(file.path, file.mode, size));
  char buffer[1 << 16];
  int64_t left = size;
  while (left > 0) {
    in.read(buffer, std::min<int64_t>(left, sizeof buffer));
    std::streamsize got = in.gcount();
    if (got <= 0) break;
    FP_RETURN_IF_ERROR(tar.Data(buffer, got));
    left -= got;
  }
  if (left != 0) {
    return absl::DataLossError(absl::StrCat(file.local_path, " changed while it was being sent"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> TarOfFiles(const std::vector<FileToSend>& files) {
  std::string out;
  FP_ASSIGN_OR_RETURN(std::unique_ptr<TarWriter> tar, TarWriter::Open(&out));
  for (const FileToSend& file : files) {
    FP_RETURN_IF_ERROR(CheckStaysUnderRoot("the destination", file.path));
    FP_RETURN_IF_ERROR(AddLocalFile(*tar, file));
  }
  FP_RETURN_IF_ERROR(tar->Close());
  return out;
}

absl::StatusOr<std::string> TarOfOneFile(absl::string_view name, absl::string_view content,
                                         uint32_t mode) {
  std::string out;
  FP_ASSIGN_OR_RETURN(std::unique_ptr<TarWriter> tar, TarWriter::Open(&out));
  FP_RETURN_IF_ERROR(tar->Header(name, mode, content.size()));
  FP_RETURN_IF_ERROR(tar->Data(content.data(), content.size()));
  FP_RETURN_IF_ERROR(tar->Close());
  return out;
}

absl::StatusOr<std::string> FirstFileOfTar(absl::string_view tar) {
  FP_ASSIGN_OR_RETURN(const ArchiveApi* api, Archive());
  std::unique_ptr<struct archive, ReaderDeleter> a(api->read_new(), ReaderDeleter{api});
  auto error = [&] {
    return absl::InvalidArgumentError(absl::StrCat("tar: ", api->error_string(a.get())));
  };
  api->read_support_format_tar(a.get());
  if (api->read_open_memory(a.get(), tar.data(), tar.size()) != ARCHIVE_OK) return error();
  struct archive_entry* entry = nullptr;
  if (api->read_next_header(a.get(), &entry) != ARCHIVE_OK) return error();
  if (api->entry_filetype(entry) != AE_IFREG) {
    return absl::InvalidArgumentError(
        absl::StrCat(api->entry_pathname(entry), " is not a regular file"));
  }
  std::string content;
  char buffer[1 << 16];
  la_ssize_t n;
  while ((n = api->read_data(a.get(), buffer, sizeof buffer)) > 0) content.append(buffer, n);
  if (n < 0) return error();
  return content;
}

}  // namespace fleetplan
