#ifndef FLEETPLAN_PLUGINS_COMMON_ARCHIVE_API_H_
#define FLEETPLAN_PLUGINS_COMMON_ARCHIVE_API_H_

// libarchive, opened when a tar stream is first made or read (docker's
// archive endpoints, slurm's files), not linked: with ICU, libxml2 and
// seven compression and ACL libraries it pulls in, it was most of the
// shared objects every fleetplan command loaded at start.

#include <archive.h>
#include <archive_entry.h>

#include "absl/status/statusor.h"

namespace fleetplan {

// The libarchive functions the tar stream calls, as loaded (their types
// taken from the headers' declarations, which are not linked).
struct ArchiveApi {
  decltype(&archive_write_new) write_new;
  decltype(&archive_write_set_format_pax_restricted) write_set_format_pax_restricted;
  decltype(&archive_write_set_bytes_in_last_block) write_set_bytes_in_last_block;
  decltype(&archive_write_open) write_open;
  decltype(&archive_write_header) write_header;
  decltype(&archive_write_data) write_data;
  decltype(&archive_write_close) write_close;
  decltype(&archive_write_free) write_free;
  decltype(&archive_read_new) read_new;
  decltype(&archive_read_support_format_tar) read_support_format_tar;
  decltype(&archive_read_open_memory) read_open_memory;
  decltype(&archive_read_next_header) read_next_header;
  decltype(&archive_read_data) read_data;
  decltype(&archive_read_free) read_free;
  decltype(&archive_error_string) error_string;
  decltype(&archive_entry_new) entry_new;
  decltype(&archive_entry_free) entry_free;
  decltype(&archive_entry_set_pathname) entry_set_pathname;
  decltype(&archive_entry_set_filetype) entry_set_filetype;
  decltype(&archive_entry_set_perm) entry_set_perm;
  decltype(&archive_entry_set_size) entry_set_size;
  decltype(&archive_entry_set_uid) entry_set_uid;
  decltype(&archive_entry_set_gid) entry_set_gid;
  decltype(&archive_entry_set_mtime) entry_set_mtime;
  decltype(&archive_entry_pathname) entry_pathname;
  decltype(&archive_entry_filetype) entry_filetype;
};

// Opens libarchive once per process; an error naming the library and its
// package when it cannot be opened or lacks a function.
absl::StatusOr<const ArchiveApi*> Archive();

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_COMMON_ARCHIVE_API_H_
