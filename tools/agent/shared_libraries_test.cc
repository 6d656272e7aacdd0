#include "tools/agent/shared_libraries.h"

#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

// What glibc's loader prints in trace mode for a program missing libfoo.
constexpr char kTraceWithMissing[] =
    "\tlinux-vdso.so.1 (0x00007ffd4b5f2000)\n"
    "\tlibfoo.so => not found\n"
    "\tlibblas.so.3 => not found\n"
    "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a1c000000)\n"
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f3a1c3f0000)\n";

TEST(ParseLoaderListTest, NotFoundLinesAreMissing) {
  LoaderList list = ParseLoaderList(kTraceWithMissing);
  EXPECT_THAT(list.missing, ElementsAre("libfoo.so", "libblas.so.3"));
  EXPECT_THAT(list.resolved,
              ElementsAre(Pair("linux-vdso.so.1", ""),
                          Pair("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
                          Pair("/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2")));
  EXPECT_THAT(list.unparsed, IsEmpty());
  EXPECT_THAT(list.errors, IsEmpty());
}

TEST(ParseLoaderListTest, LoaderErrorsNameTheMissingLibraryOrAreErrors) {
  LoaderList list = ParseLoaderList(
      "./train: error while loading shared libraries: libblas.so.3: cannot open shared "
      "object file: No such file or directory\n"
      "./train: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.99' not found (required "
      "by ./train)\n");
  EXPECT_THAT(list.missing, ElementsAre("libblas.so.3"));
  EXPECT_THAT(list.errors, ElementsAre(HasSubstr("version `GLIBC_2.99' not found")));
  EXPECT_THAT(list.resolved, IsEmpty());
}

TEST(ParseLoaderListTest, GarbageIsUnparsedAndEmptyIsNothing) {
  LoaderList garbage = ParseLoaderList("awk: not found\n\tlibc.so.6 => somewhere\n");
  EXPECT_THAT(garbage.unparsed, ElementsAre("awk: not found", "libc.so.6 => somewhere"));
  EXPECT_THAT(garbage.resolved, IsEmpty());
  EXPECT_THAT(garbage.missing, IsEmpty());

  LoaderList empty = ParseLoaderList("");
  EXPECT_THAT(empty.resolved, IsEmpty());
  EXPECT_THAT(empty.missing, IsEmpty());
  EXPECT_THAT(empty.unparsed, IsEmpty());
}

class CheckLibrariesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }

  void TearDown() override {
    unsetenv("FAKE_LOADER_OUTPUT");
    unsetenv("FAKE_LOADER_STATUS");
  }

  // The stand-in loader, printing `output` and exiting with `status`.
  std::string Loader(const std::string& output, int status = 0) {
    setenv("FAKE_LOADER_OUTPUT", output.c_str(), 1);
    setenv("FAKE_LOADER_STATUS", absl::StrCat(status).c_str(), 1);
    return absl::StrCat(getenv("TEST_SRCDIR"), "/fleetplan/tools/agent/fake_loader");
  }

  LibrariesResult Check(const std::string& program, const std::string& loader = "",
                        bool check_only = false) {
    return CheckLibraries({program, check_only, loader});
  }

  std::string dir_;
};

TEST_F(CheckLibrariesTest, ARealProgramResolvesThroughItsOwnLoader) {
  LibrariesResult result = Check("/bin/sh");
  EXPECT_EQ(result.check.status, CheckStatus::kOk) << result.check.message;
  EXPECT_THAT(result.check.message, HasSubstr("/bin/sh: all "));
  EXPECT_THAT(result.check.message, HasSubstr("shared libraries resolve (loader /"));
  EXPECT_THAT(result.resolved, testing::Contains(Pair("libc.so.6", StartsWith("/"))));
}

TEST_F(CheckLibrariesTest, TheProgramsLoaderIsItsPtInterp) {
  FP_ASSERT_OK_AND_ASSIGN(ProgramLoader sh, ReadProgramLoader("/bin/sh"));
  EXPECT_EQ(sh.kind, ProgramLoader::Kind::kDynamic);
  EXPECT_THAT(sh.interpreter, StartsWith("/lib"));
  EXPECT_THAT(ReadProgramLoader(dir_ + "/none"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(CheckLibrariesTest, MissingLibrariesFailNamingThem) {
  std::string loader = Loader(kTraceWithMissing);
  LibrariesResult result = Check("/bin/sh", loader);
  EXPECT_EQ(result.check.status, CheckStatus::kFail);
  EXPECT_THAT(result.check.message,
              HasSubstr("/bin/sh needs libfoo.so, libblas.so.3, not found on this node "
                        "(LD_LIBRARY_PATH="));
  EXPECT_THAT(result.check.message, HasSubstr("fix: install them on this node"));
}

TEST_F(CheckLibrariesTest, ALoaderThatFailsIsASkipNeverOk) {
  LibrariesResult failed = Check("/bin/sh", Loader("awk: not found\n", 127));
  EXPECT_EQ(failed.check.status, CheckStatus::kSkip);
  EXPECT_THAT(failed.check.message,
              HasSubstr("exited with status 127 listing the libraries of /bin/sh: awk: not "
                        "found; libraries not checked"));

  LibrariesResult silent = Check("/bin/sh", Loader(""));
  EXPECT_EQ(silent.check.status, CheckStatus::kSkip);
  EXPECT_THAT(silent.check.message, HasSubstr("listed no libraries for /bin/sh"));

  LibrariesResult garbage = Check("/bin/sh", Loader("Segmentation fault\n"));
  EXPECT_EQ(garbage.check.status, CheckStatus::kSkip);
  EXPECT_THAT(garbage.check.message,
              HasSubstr("cannot read the loader's list of the libraries of /bin/sh: "
                        "unexpected 'Segmentation fault'"));
}

TEST_F(CheckLibrariesTest, ALoaderThatIsNotThereFails) {
  LibrariesResult result = Check("/bin/sh", dir_ + "/ld-gone.so.2");
  EXPECT_EQ(result.check.status, CheckStatus::kFail);
  EXPECT_THAT(result.check.message,
              HasSubstr(absl::StrCat("names the loader ", dir_, "/ld-gone.so.2, which is not "
                                     "on this node")));
}

TEST_F(CheckLibrariesTest, AMissingProgramFailsOnlyOnceItShouldBeThere) {
  std::string program = dir_ + "/train";
  LibrariesResult applied = Check(program);
  EXPECT_EQ(applied.check.status, CheckStatus::kFail);
  EXPECT_THAT(applied.check.message, HasSubstr(program + " does not exist"));
  LibrariesResult checked = Check(program, "", /*check_only=*/true);
  EXPECT_EQ(checked.check.status, CheckStatus::kSkip);
  EXPECT_THAT(checked.check.message, HasSubstr("is not on this node yet (apply copies it)"));
}

TEST_F(CheckLibrariesTest, AScriptIsSkipped) {
  std::string script = dir_ + "/rank.sh";
  ASSERT_THAT(WriteFileAtomic(script, "#!/bin/sh\n", 0755), IsOk());
  LibrariesResult result = Check(script);
  EXPECT_EQ(result.check.status, CheckStatus::kSkip);
  EXPECT_THAT(result.check.message, HasSubstr("is not a dynamically linked program"));
}

}  // namespace
}  // namespace fleetplan
