#include "tools/sync/source_manifest.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

class SourceManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = absl::StrCat(testing::TempDir(), "/source-XXXXXX");
    dir_ = mkdtemp(pattern.data());
    root_ = dir_ + "/tree";
    cache_ = dir_ + "/cache/digests";
    ASSERT_TRUE(WriteFileAtomic(root_ + "/a.txt", "alpha\n", 0644).ok());
    ASSERT_TRUE(WriteFileAtomic(root_ + "/d/b.txt", "bravo\n", 0755).ok());
  }

  // Moves the cache's written time 10 s on: its entries are no longer racy.
  void AgeCache() {
    std::string text = *ReadFileToString(cache_);
    size_t space = text.find(' ', text.find(' ') + 1);
    size_t end = text.find('\n');
    int64_t written = std::stoll(text.substr(space + 1, end - space - 1));
    text = absl::StrCat(text.substr(0, space + 1), written + 10'000'000'000LL, text.substr(end));
    ASSERT_TRUE(WriteFileAtomic(cache_, text, 0644).ok());
  }

  std::string Digests() const {
    absl::StatusOr<Manifest> manifest = BuildSourceManifest(root_, {}, cache_);
    EXPECT_TRUE(manifest.ok()) << manifest.status();
    return manifest.ok() ? SerializeManifest(*manifest) : "";
  }

  std::string dir_, root_, cache_;
};

TEST_F(SourceManifestTest, TheSameManifestWithAndWithoutTheCache) {
  std::string uncached = SerializeManifest(*BuildManifest(root_, {}));
  EXPECT_EQ(Digests(), uncached);  // writes the cache
  EXPECT_TRUE(ReadFileToString(cache_).ok());
  AgeCache();
  EXPECT_EQ(Digests(), uncached);  // from the cache
}

TEST_F(SourceManifestTest, AnUnchangedFileIsTakenFromTheCacheNotRead) {
  Digests();
  AgeCache();
  // A cache that claims another digest for a.txt is believed while a.txt is
  // as it recorded: proof that the file was not read.
  std::string text = *ReadFileToString(cache_);
  std::string real = SerializeManifest(*BuildManifest(root_, {}));
  std::string digest = real.substr(real.find(' ', real.find(' ') + 1) + 1);
  digest = digest.substr(digest.find(' ') + 1, digest.find(' ', digest.find(' ') + 1) -
                                                   digest.find(' ') - 1);
  size_t at = text.find(digest);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, digest.size(), std::string(digest.size(), '0'));
  ASSERT_TRUE(WriteFileAtomic(cache_, text, 0644).ok());
  EXPECT_NE(Digests().find(std::string(digest.size(), '0')), std::string::npos);
}

TEST_F(SourceManifestTest, AnEditedFileIsReadAgain) {
  Digests();
  AgeCache();
  ASSERT_TRUE(WriteFileAtomic(root_ + "/a.txt", "ALPHA\n", 0644).ok());
  EXPECT_EQ(Digests(), SerializeManifest(*BuildManifest(root_, {})));
}

TEST_F(SourceManifestTest, ARemovedFileLeavesTheCacheAndAnUnwritableCacheIsNoError) {
  Digests();
  ASSERT_EQ(unlink((root_ + "/d/b.txt").c_str()), 0);
  EXPECT_EQ(Digests().find("d/b.txt"), std::string::npos);
  EXPECT_EQ(ReadFileToString(cache_)->find("d/b.txt"), std::string::npos);
  // A cache path under a file: nothing can be written there.
  absl::StatusOr<Manifest> manifest = BuildSourceManifest(root_, {}, root_ + "/a.txt/cache");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(SerializeManifest(*manifest), SerializeManifest(*BuildManifest(root_, {})));
}

TEST_F(SourceManifestTest, TheCacheLivesUnderTheUsersCacheFolder) {
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(DigestCachePath("/src").rfind("/xdg/fleetplan/digests/", 0), 0u);
  EXPECT_NE(DigestCachePath("/src"), DigestCachePath("/other"));
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DigestCachePath("/src").rfind("/home/u/.cache/fleetplan/digests/", 0), 0u);
}

}  // namespace
}  // namespace fleetplan
