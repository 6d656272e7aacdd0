#include "plugins/docker/curl_api.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(CurlApiTest, OpensTheSystemLibcurlOnce) {
  FP_ASSERT_OK_AND_ASSIGN(const CurlApi* api, Curl());
  EXPECT_STREQ(api->easy_strerror(CURLE_OK), "No error");
  CURL* curl = api->easy_init();
  ASSERT_NE(curl, nullptr);
  EXPECT_EQ(api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L), CURLE_OK);
  api->easy_cleanup(curl);
  FP_ASSERT_OK_AND_ASSIGN(const CurlApi* again, Curl());
  EXPECT_EQ(again, api);
}

TEST(CurlApiTest, AMissingLibraryNamesItsPackage) {
  absl::StatusOr<CurlApi> api = OpenCurl("libcurl-not-here.so.4");
  EXPECT_THAT(api, StatusIs(absl::StatusCode::kFailedPrecondition,
                            HasSubstr("needs libcurl-not-here.so.4 (Debian package libcurl4)")));
}

TEST(CurlApiTest, ALibraryWithoutCurlsFunctionsIsRefused) {
  absl::StatusOr<CurlApi> api = OpenCurl("libz.so.1");
  EXPECT_THAT(api, StatusIs(absl::StatusCode::kFailedPrecondition,
                            HasSubstr("libz.so.1 lacks curl_easy_init")));
}

}  // namespace
}  // namespace fleetplan
