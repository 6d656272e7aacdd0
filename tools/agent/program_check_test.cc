#include "tools/agent/program_check.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

class ProgramCheckTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }

  // An executable `name` in `folder` printing `says` and exiting `status`.
  std::string Tool(const std::string& folder, const std::string& name, const std::string& says,
                   int status = 0) {
    std::string path = absl::StrCat(dir_, "/", folder, "/", name);
    EXPECT_TRUE(WriteFileAtomic(path,
                                absl::StrCat("#!/bin/sh\necho '", says, "'\nexit ", status, "\n"),
                                0755)
                    .ok());
    return path;
  }

  std::string dir_;
};

TEST_F(ProgramCheckTest, ANameIsLookedUpOnThePathAsAShellDoes) {
  Tool("venv/bin", "python", "Python 3.11.2");
  Tool("usr/bin", "python", "Python 3.9.0");
  std::string path = absl::StrCat(dir_, "/empty::", dir_, "/venv/bin:", dir_, "/usr/bin");
  ProgramFindings found = CheckProgram("python", path);
  EXPECT_EQ(found.check.status, CheckStatus::kOk);
  EXPECT_EQ(found.resolved, dir_ + "/venv/bin/python");
  EXPECT_EQ(found.check.message, absl::StrCat("python is ", dir_, "/venv/bin/python"));
  ASSERT_TRUE(found.fact.has_value());
  EXPECT_EQ(found.fact->first, "interpreter");
  EXPECT_EQ(found.fact->second, absl::StrCat("3.11.2 ", dir_, "/venv/bin/python"));
}

TEST_F(ProgramCheckTest, AProgramFoundNowhereFailsNamingThePath) {
  ProgramFindings found = CheckProgram("python3", dir_ + "/nothing");
  EXPECT_EQ(found.check.status, CheckStatus::kFail);
  EXPECT_THAT(found.check.message,
              HasSubstr(absl::StrCat("python3 is not on this node's PATH (", dir_, "/nothing)")));
  EXPECT_TRUE(found.resolved.empty());
  ProgramFindings missing = CheckProgram(dir_ + "/train", "/usr/bin");
  EXPECT_EQ(missing.check.status, CheckStatus::kFail);
  EXPECT_THAT(missing.check.message, HasSubstr("does not exist or is not executable"));
}

TEST_F(ProgramCheckTest, APathIsTakenAsWrittenAndAnythingButPythonHasNoVersion) {
  std::string train = Tool("w", "train", "hello");
  ProgramFindings found = CheckProgram(train, "");
  EXPECT_EQ(found.check.status, CheckStatus::kOk);
  EXPECT_EQ(found.check.message, train);
  EXPECT_FALSE(found.fact.has_value());
  EXPECT_FALSE(found.interpreter_skipped.has_value());
}

TEST_F(ProgramCheckTest, APythonWhoseVersionCannotBeReadIsASkipNeverOk) {
  std::string broken = Tool("bin", "python3", "oops", 1);
  ProgramFindings found = CheckProgram(broken, "");
  EXPECT_EQ(found.check.status, CheckStatus::kOk);
  EXPECT_FALSE(found.fact.has_value());
  ASSERT_TRUE(found.interpreter_skipped.has_value());
  EXPECT_EQ(found.interpreter_skipped->status, CheckStatus::kSkip);
  EXPECT_THAT(found.interpreter_skipped->message,
              HasSubstr("exited with status 1 saying 'oops'"));
  std::string garbled = Tool("other", "python3", "Python three");
  EXPECT_TRUE(CheckProgram(garbled, "").interpreter_skipped.has_value());
}

TEST(ParsePythonVersionTest, OnlyAVersionLine) {
  EXPECT_EQ(ParsePythonVersion("Python 3.11.2\n"), "3.11.2");
  EXPECT_EQ(ParsePythonVersion("Python 3.9"), "3.9");
  EXPECT_EQ(ParsePythonVersion(""), std::nullopt);
  EXPECT_EQ(ParsePythonVersion("Python"), std::nullopt);
  EXPECT_EQ(ParsePythonVersion("Python 3.11.2 extra"), std::nullopt);
  EXPECT_EQ(ParsePythonVersion("Jython 2.7"), std::nullopt);
}

}  // namespace
}  // namespace fleetplan
