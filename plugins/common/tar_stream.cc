#include "plugins/common/tar_stream.h"

#include <archive.h>
#include <archive_entry.h>

#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/util/path_policy.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct ReadArchiveDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct EntryDeleter {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};
using WriteArchive = std::unique_ptr<struct archive, ArchiveDeleter>;
using Entry = std::unique_ptr<struct archive_entry, EntryDeleter>;

la_ssize_t AppendToString(struct archive*, void* out, const void* data,
                          size_t size) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
  return static_cast<la_ssize_t>(size);
}

absl::StatusOr<WriteArchive> OpenWriter(std::string* out) {
  WriteArchive a(archive_write_new());
  // pax: paths and sizes of any length.
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open(a.get(), out, nullptr, AppendToString, nullptr) !=
      ARCHIVE_OK) {
    return absl::InternalError(
        absl::StrCat("tar: ", archive_error_string(a.get())));
  }
  return a;
}

Entry NewEntry(absl::string_view path, mode_t type, uint32_t mode,
               int64_t size) {
  Entry entry(archive_entry_new());
  std::string p(path);
  archive_entry_set_pathname(entry.get(), p.c_str());
  archive_entry_set_filetype(entry.get(), type);
  archive_entry_set_perm(entry.get(), mode & 07777);
  archive_entry_set_size(entry.get(), size);
  archive_entry_set_uid(entry.get(), 0);
  archive_entry_set_gid(entry.get(), 0);
  archive_entry_set_mtime(entry.get(), time(nullptr), 0);
  return entry;
}

absl::Status WriteHeader(struct archive* a, struct archive_entry* entry) {
  if (archive_write_header(a, entry) != ARCHIVE_OK) {
    return absl::InternalError(absl::StrCat("tar: ", archive_error_string(a)));
  }
  return absl::OkStatus();
}

absl::Status WriteData(struct archive* a, const char* data, size_t size) {
  if (size > 0 && archive_write_data(a, data, size) < 0) {
    return absl::InternalError(absl::StrCat("tar: ", archive_error_string(a)));
  }
  return absl::OkStatus();
}

absl::Status AddLocalFile(struct archive* a, const FileToSend& file) {
  std::ifstream in(file.local_path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", file.local_path, " to send"));
  }
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  in.seekg(0);
  Entry entry = NewEntry(file.path, AE_IFREG, file.mode, size);
  FP_RETURN_IF_ERROR(WriteHeader(a, entry.get()));
  char buffer[1 << 16];
  int64_t left = size;
  while (left > 0) {
    in.read(buffer, std::min<int64_t>(left, sizeof buffer));
    std::streamsize got = in.gcount();
    if (got <= 0) break;
    FP_RETURN_IF_ERROR(WriteData(a, buffer, got));
    left -= got;
  }
  if (left != 0) {
    return absl::DataLossError(
        absl::StrCat(file.local_path, " changed while it was being sent"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> TarOfFiles(const std::vector<FileToSend>& files) {
  std::string out;
  FP_ASSIGN_OR_RETURN(WriteArchive a, OpenWriter(&out));
  for (const FileToSend& file : files) {
    FP_RETURN_IF_ERROR(CheckStaysUnderRoot("the destination", file.path));
    FP_RETURN_IF_ERROR(AddLocalFile(a.get(), file));
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return absl::InternalError(
        absl::StrCat("tar: ", archive_error_string(a.get())));
  }
  return out;
}

absl::StatusOr<std::string> TarOfOneFile(absl::string_view name,
                                         absl::string_view content,
                                         uint32_t mode) {
  std::string out;
  FP_ASSIGN_OR_RETURN(WriteArchive a, OpenWriter(&out));
  Entry entry = NewEntry(name, AE_IFREG, mode, content.size());
  FP_RETURN_IF_ERROR(WriteHeader(a.get(), entry.get()));
  FP_RETURN_IF_ERROR(WriteData(a.get(), content.data(), content.size()));
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return absl::InternalError(
        absl::StrCat("tar: ", archive_error_string(a.get())));
  }
  return out;
}

absl::StatusOr<std::string> FirstFileOfTar(absl::string_view tar) {
  std::unique_ptr<struct archive, ReadArchiveDeleter> a(archive_read_new());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), tar.data(), tar.size()) != ARCHIVE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("tar: ", archive_error_string(a.get())));
  }
  struct archive_entry* entry = nullptr;
  if (archive_read_next_header(a.get(), &entry) != ARCHIVE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("tar: ", archive_error_string(a.get())));
  }
  if (archive_entry_filetype(entry) != AE_IFREG) {
    return absl::InvalidArgumentError(absl::StrCat(
        archive_entry_pathname(entry), " is not a regular file"));
  }
  std::string content;
  char buffer[1 << 16];
  la_ssize_t n;
  while ((n = archive_read_data(a.get(), buffer, sizeof buffer)) > 0) {
    content.append(buffer, n);
  }
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tar: ", archive_error_string(a.get())));
  }
  return content;
}

}  // namespace fleetplan
