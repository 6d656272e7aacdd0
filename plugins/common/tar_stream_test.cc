#include "plugins/common/tar_stream.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(TarStreamTest, OneFileRoundTrips) {
  std::string content("binary\0bytes\n", 13);
  FP_ASSERT_OK_AND_ASSIGN(std::string tar, TarOfOneFile("a/b.txt", content, 0600));
  FP_ASSERT_OK_AND_ASSIGN(std::string back, FirstFileOfTar(tar));
  EXPECT_EQ(back, content);
}

TEST(TarStreamTest, FilesKeepPathsAndModes) {
  std::string dir = std::getenv("TEST_TMPDIR");
  std::string a = dir + "/a", b = dir + "/b";
  std::ofstream(a) << "alpha";
  std::ofstream(b) << std::string(100000, 'b');
  FP_ASSERT_OK_AND_ASSIGN(
      std::string tar,
      TarOfFiles({{a, "bin/run", 0755, 5}, {b, "data/deep/b", 0640, 100000}}));
  // Read it back with libarchive: names, modes, sizes, in order.
  struct archive* r = archive_read_new();
  archive_read_support_format_tar(r);
  ASSERT_EQ(archive_read_open_memory(r, tar.data(), tar.size()), ARCHIVE_OK);
  struct archive_entry* e;
  std::vector<std::string> seen;
  while (archive_read_next_header(r, &e) == ARCHIVE_OK) {
    seen.push_back(absl::StrCat(archive_entry_pathname(e), " ",
                                archive_entry_perm(e), " ",
                                archive_entry_size(e)));
  }
  archive_read_free(r);
  EXPECT_THAT(seen, ::testing::ElementsAre(absl::StrCat("bin/run ", 0755, " 5"),
                                           absl::StrCat("data/deep/b ", 0640,
                                                        " 100000")));
}

TEST(TarStreamTest, RejectsPathsLeavingTheRoot) {
  EXPECT_THAT(TarOfFiles({{"/etc/hostname", "../x", 0644, 0}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "path \"../x\" climbs out of the destination"));
  EXPECT_THAT(TarOfFiles({{"/etc/hostname", "/x", 0644, 0}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be relative"));
}

TEST(TarStreamTest, MissingLocalFileIsNotFound) {
  EXPECT_THAT(TarOfFiles({{"/nonexistent/f", "f", 0644, 0}}),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/f"));
}

TEST(TarStreamTest, CorruptTarIsInvalidArgument) {
  EXPECT_THAT(FirstFileOfTar("not a tar stream at all"),
              StatusIs(absl::StatusCode::kInvalidArgument, "tar"));
}

}  // namespace
}  // namespace fleetplan
