#include "tools/sync/manifest.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

std::string TempDir() {
  std::string pattern = absl::StrCat(
      getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp", "/manifestXXXXXX");
  return mkdtemp(pattern.data());
}

void Write(const std::string& root, const std::string& path,
           const std::string& content, uint32_t mode = 0644) {
  ASSERT_THAT(WriteFileAtomic(absl::StrCat(root, "/", path), content, mode), IsOk());
}

std::vector<std::string> Paths(const Manifest& manifest) {
  std::vector<std::string> paths;
  for (const ManifestEntry& entry : manifest.entries) paths.push_back(entry.path);
  return paths;
}

TEST(ManifestTest, WalksSortedWithSizesModesAndDigests) {
  std::string root = TempDir();
  Write(root, "b.txt", "bee");
  Write(root, "a/run.sh", "#!/bin/sh\n", 0755);
  FP_ASSERT_OK_AND_ASSIGN(Manifest manifest, BuildManifest(root, {}));
  ASSERT_THAT(Paths(manifest), ElementsAre("a/run.sh", "b.txt"));
  EXPECT_EQ(manifest.entries[0].mode, 0755u);
  EXPECT_EQ(manifest.entries[1].size, 3u);
  EXPECT_EQ(manifest.entries[1].local_path, root + "/b.txt");
  EXPECT_NE(manifest.entries[0].digest, manifest.entries[1].digest);
  EXPECT_FALSE(manifest.entries[0].extra);
}

TEST(ManifestTest, ExcludesMatchEveryPathComponent) {
  std::string root = TempDir();
  Write(root, "keep.cc", "x");
  Write(root, ".git/HEAD", "ref");
  Write(root, "sub/bazel-out/x", "y");
  Write(root, "sub/model.pt", "weights");
  Write(root, ".fleetplan/nodes/a/manifest", "state");
  FP_ASSERT_OK_AND_ASSIGN(Manifest manifest,
                          BuildManifest(root, {".git", "bazel-*", "*.pt"}));
  EXPECT_THAT(Paths(manifest), ElementsAre("keep.cc"));
  EXPECT_TRUE(IsExcluded("a/bazel-bin/b", {"bazel-*"}));
  EXPECT_FALSE(IsExcluded("a/bazel/b", {"bazel-*"}));
}

TEST(ManifestTest, MissingRootIsNotFound) {
  EXPECT_THAT(BuildManifest("/nonexistent/fleetplan/tree", {}),
              StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("/nonexistent/fleetplan/tree")));
}

TEST(ManifestTest, SourceDigestIgnoresExtrasButSeesContentAndMode) {
  std::string root = TempDir();
  Write(root, "a", "1");
  FP_ASSERT_OK_AND_ASSIGN(Manifest manifest, BuildManifest(root, {}));
  std::string before = manifest.SourceDigest();

  std::string outside = TempDir();
  Write(outside, "train", "binary", 0755);
  ASSERT_THAT(AddExtraFiles({{outside + "/train", ".fleetplan/bin/train"}}, &manifest),
              IsOk());
  ASSERT_THAT(Paths(manifest), ElementsAre(".fleetplan/bin/train", "a"));
  EXPECT_TRUE(manifest.entries[0].extra);
  EXPECT_EQ(manifest.SourceDigest(), before);

  Write(root, "a", "2");
  FP_ASSERT_OK_AND_ASSIGN(Manifest changed, BuildManifest(root, {}));
  EXPECT_NE(changed.SourceDigest(), before);
  ASSERT_EQ(chmod((root + "/a").c_str(), 0600), 0);
  Write(root, "a", "1", 0600);
  FP_ASSERT_OK_AND_ASSIGN(Manifest mode_changed, BuildManifest(root, {}));
  EXPECT_NE(mode_changed.SourceDigest(), before);
}

TEST(ManifestTest, MissingExtraIsNotFound) {
  Manifest manifest;
  EXPECT_THAT(AddExtraFiles({{"/nonexistent/agent", ".fleetplan/bin/agent"}}, &manifest),
              StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("/nonexistent/agent")));
}

TEST(ManifestTest, SerializeRoundTripsOddPaths) {
  Manifest manifest;
  manifest.entries.push_back({"dir/with space\nand newline \"q\"", 12, 0755, "abc", false, ""});
  manifest.entries.push_back({"z", 0, 0600, "def", true, ""});
  std::string text = SerializeManifest(manifest);
  FP_ASSERT_OK_AND_ASSIGN(Manifest parsed, ParseManifest(text));
  ASSERT_EQ(parsed.entries.size(), 2u);
  EXPECT_EQ(parsed.entries[0].path, manifest.entries[0].path);
  EXPECT_EQ(parsed.entries[0].size, 12u);
  EXPECT_EQ(parsed.entries[0].mode, 0755u);
  EXPECT_EQ(parsed.entries[0].digest, "abc");
  EXPECT_FALSE(parsed.entries[0].extra);
  EXPECT_TRUE(parsed.entries[1].extra);
  EXPECT_EQ(SerializeManifest(parsed), text);
}

TEST(ManifestTest, ParseRejectsGarbageNamingTheLine) {
  EXPECT_THAT(ParseManifest("f 0644 1 abc a\nnot a manifest line\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("line 2")));
}

TEST(ManifestTest, ParseRejectsAPathListedTwice) {
  absl::StatusOr<Manifest> parsed = ParseManifest("f 0644 1 d1 a\nf 0755 2 d2 a\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), "manifest: \"a\" is listed twice");
}

TEST(ManifestTest, DiffSendsNewAndChangedAndRemovesGone) {
  Manifest before, after;
  before.entries = {{"gone", 1, 0644, "d1", false, ""},
                    {"same", 1, 0644, "d2", false, ""},
                    {"edited", 1, 0644, "d3", false, ""},
                    {"chmod", 1, 0644, "d4", false, ""}};
  after.entries = {{"chmod", 1, 0755, "d4", false, ""},
                   {"edited", 1, 0644, "d9", false, ""},
                   {"new", 1, 0644, "d5", false, ""},
                   {"same", 1, 0644, "d2", false, ""}};
  ManifestDiff diff = DiffManifests(before, after);
  EXPECT_THAT(diff.to_send, ElementsAre(Field(&ManifestEntry::path, "chmod"),
                                        Field(&ManifestEntry::path, "edited"),
                                        Field(&ManifestEntry::path, "new")));
  EXPECT_THAT(diff.to_remove, ElementsAre("gone"));
  ManifestDiff none = DiffManifests(after, after);
  EXPECT_THAT(none.to_send, IsEmpty());
  EXPECT_THAT(none.to_remove, IsEmpty());
}

TEST(ManifestTest, TreeMismatchesNameMissingAndChangedFilesOnly) {
  std::string source = TempDir();
  Write(source, "same.txt", "kept");
  Write(source, "edited.txt", "before");
  Write(source, "flipped.txt", "same bytes");
  Write(source, "sub/gone.txt", "here");
  Write(source, "resized.txt", "short");
  FP_ASSERT_OK_AND_ASSIGN(Manifest manifest, BuildManifest(source, {}));
  EXPECT_THAT(FindTreeMismatches(source, manifest), IsEmpty());

  std::string copy = TempDir();
  Write(copy, "same.txt", "kept");
  Write(copy, "edited.txt", "BEFORE");  // same size, other content
  Write(copy, "flipped.txt", "same bytes", 0755);
  Write(copy, "resized.txt", "longer");
  Write(copy, "unlisted.txt", "not in the manifest: not looked at");
  EXPECT_THAT(FindTreeMismatches(copy, manifest),
              ElementsAre("edited.txt", "flipped.txt", "resized.txt", "sub/gone.txt"));
}

}  // namespace
}  // namespace fleetplan
