#include "tools/util/lazy_library.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// A library's functions, as the *_api.h structs hold them.
struct ZlibApi {
  const char* (*version)();
};

absl::StatusOr<ZlibApi> LoadZlib(const char* soname, const char* function) {
  absl::StatusOr<LazyLibrary> library = LazyLibrary::Open(soname, "zlib1g", "a test");
  if (!library.ok()) return library.status();
  ZlibApi api{};
  library->Load(api.version, function);
  return library->Complete(api);
}

TEST(LazyLibraryTest, CompleteGivesTheFunctionsOrNamesTheMissingOnes) {
  FP_ASSERT_OK_AND_ASSIGN(ZlibApi zlib, LoadZlib("libz.so.1", "zlibVersion"));
  EXPECT_THAT(zlib.version(), testing::StartsWith("1."));
  EXPECT_THAT(LoadZlib("libz.so.1", "zlibNoSuchFunction"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("libz.so.1 lacks zlibNoSuchFunction")));
  EXPECT_THAT(LoadZlib("libz-not-here.so.1", "zlibVersion"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("a test needs libz-not-here.so.1 (Debian package zlib1g)")));
}

// Loaded once, kept for the process: the same functions on every call, and
// a library that could not be opened is not looked for again.
TEST(LazyLibraryTest, OnceLoadsOnceAndKeepsTheResultOrTheError) {
  int loads = 0;
  auto found = [] {
    return LazyLibrary::Once<ZlibApi>([] { return LoadZlib("libz.so.1", "zlibVersion"); });
  };
  FP_ASSERT_OK_AND_ASSIGN(const ZlibApi* first, found());
  FP_ASSERT_OK_AND_ASSIGN(const ZlibApi* again, found());
  EXPECT_EQ(first, again);
  auto missing = [&loads] {
    return LazyLibrary::Once<ZlibApi>([&loads] {
      ++loads;
      return LoadZlib("libz-not-here.so.1", "zlibVersion");
    });
  };
  EXPECT_THAT(missing(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(missing(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(loads, 1);
}

}  // namespace
}  // namespace fleetplan
