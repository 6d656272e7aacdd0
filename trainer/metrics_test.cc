#include "trainer/metrics.h"

#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetplan::trainer {
namespace {

TEST(MetricsTest, StepLineHasTheRequiredFieldsOnly) {
  MetricsRecord record;
  record.event = "step";
  record.epoch = 1;
  record.step = 120;
  record.world_size = 2;
  record.loss = 0.5;
  record.samples_per_sec = 1000.0;
  nlohmann::json line = nlohmann::json::parse(FormatMetrics(record));
  EXPECT_EQ(line["event"], "step");
  EXPECT_EQ(line["epoch"], 1);
  EXPECT_EQ(line["step"], 120);
  EXPECT_EQ(line["world_size"], 2);
  EXPECT_DOUBLE_EQ(line["loss"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(line["samples_per_sec"].get<double>(), 1000.0);
  EXPECT_FALSE(line.contains("test_accuracy"));
  EXPECT_FALSE(line.contains("param_digest"));
  EXPECT_FALSE(line.contains("checkpoint_world_size"));
}

TEST(MetricsTest, ResumeLineSaysTheOldAndNewWorldSize) {
  MetricsRecord resume{"resume", /*epoch=*/0, /*step=*/167, /*rank=*/0,
                       /*world_size=*/3};
  resume.checkpoint_world_size = 2;
  resume.checkpoint_step = 200;
  resume.epoch_position = 25600;
  nlohmann::json line = nlohmann::json::parse(FormatMetrics(resume));
  EXPECT_EQ(line["world_size"], 3);
  EXPECT_EQ(line["checkpoint_world_size"], 2);
  EXPECT_EQ(line["checkpoint_step"], 200);
  EXPECT_EQ(line["epoch_position"], 25600);
}

TEST(MetricsTest, WriterEmitsOneLinePerRecord) {
  std::ostringstream out;
  MetricsWriter writer(out);
  MetricsRecord record;
  record.event = "epoch";
  record.test_accuracy = 0.9;
  writer.Write(record);
  record.event = "done";
  writer.Write(record);
  std::istringstream lines(out.str());
  std::string first, second, rest;
  ASSERT_TRUE(std::getline(lines, first));
  ASSERT_TRUE(std::getline(lines, second));
  EXPECT_FALSE(std::getline(lines, rest));
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(first)["test_accuracy"].get<double>(),
                   0.9);
  EXPECT_EQ(nlohmann::json::parse(second)["event"], "done");
}

TEST(ThroughputTest, CountsSamplesOverTime) {
  Throughput meter;
  meter.Add(100);
  absl::SleepFor(absl::Milliseconds(20));
  const double rate = meter.SamplesPerSec();
  EXPECT_GT(rate, 0.0);
  EXPECT_LT(rate, 100 / 0.02 + 1);
  meter.Reset();
  EXPECT_EQ(meter.SamplesPerSec(), 0.0);
}

}  // namespace
}  // namespace fleetplan::trainer
