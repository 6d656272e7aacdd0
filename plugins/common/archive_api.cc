#include "plugins/common/archive_api.h"

#include "tools/util/lazy_library.h"

namespace fleetplan {
namespace {

absl::StatusOr<ArchiveApi> OpenArchive() {
  absl::StatusOr<LazyLibrary> library =
      LazyLibrary::Open("libarchive.so.13", "libarchive13", "a tar stream (docker, slurm)");
  if (!library.ok()) return library.status();
  ArchiveApi api{};
  library->Load(api.write_new, "archive_write_new");
  library->Load(api.write_set_format_pax_restricted, "archive_write_set_format_pax_restricted");
  library->Load(api.write_set_bytes_in_last_block, "archive_write_set_bytes_in_last_block");
  library->Load(api.write_open, "archive_write_open");
  library->Load(api.write_header, "archive_write_header");
  library->Load(api.write_data, "archive_write_data");
  library->Load(api.write_close, "archive_write_close");
  library->Load(api.write_free, "archive_write_free");
  library->Load(api.read_new, "archive_read_new");
  library->Load(api.read_support_format_tar, "archive_read_support_format_tar");
  library->Load(api.read_open_memory, "archive_read_open_memory");
  library->Load(api.read_next_header, "archive_read_next_header");
  library->Load(api.read_data, "archive_read_data");
  library->Load(api.read_free, "archive_read_free");
  library->Load(api.error_string, "archive_error_string");
  library->Load(api.entry_new, "archive_entry_new");
  library->Load(api.entry_free, "archive_entry_free");
  library->Load(api.entry_set_pathname, "archive_entry_set_pathname");
  library->Load(api.entry_set_filetype, "archive_entry_set_filetype");
  library->Load(api.entry_set_perm, "archive_entry_set_perm");
  library->Load(api.entry_set_size, "archive_entry_set_size");
  library->Load(api.entry_set_uid, "archive_entry_set_uid");
  library->Load(api.entry_set_gid, "archive_entry_set_gid");
  library->Load(api.entry_set_mtime, "archive_entry_set_mtime");
  library->Load(api.entry_pathname, "archive_entry_pathname");
  library->Load(api.entry_filetype, "archive_entry_filetype");
  return library->Complete(api);
}

}  // namespace

absl::StatusOr<const ArchiveApi*> Archive() {
  return LazyLibrary::Once<ArchiveApi>([] { return OpenArchive(); });
}

}  // namespace fleetplan
