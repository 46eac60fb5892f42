// The metric catalogue: documented defaults, one entry per name, thresholds,
// the stored list round trip and the config check.
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "harness/logs/figures.h"
#include "harness/metrics/catalogue.h"

namespace twinbench::metrics {
namespace {

const Metric& metric(const std::string& name) {
  const Metric* m = find(name);
  if (m == nullptr) throw std::runtime_error("no metric " + name);
  return *m;
}

const Metric* in(const std::vector<Metric>& list, const std::string& name) {
  for (const Metric& m : list)
    if (m.name == name) return &m;
  return nullptr;
}

TEST(Catalogue, DefaultsAreDocumentedValues) {
  EXPECT_EQ(metric("step_time_mean_s").label, "Avg s/step");
  EXPECT_EQ(metric("step_time_mean_s").direction, Direction::kLowerIsBetter);
  EXPECT_EQ(metric("step_time_median_s").judge, Judge::kTime);  // the per-run value that is judged
  EXPECT_EQ(metric("step_time_mean_s").judge, Judge::kRate);    // MaxView's mean shares its verdict
  EXPECT_DOUBLE_EQ(metric("tokens_per_s_per_device").rel_threshold, 0.03);
  EXPECT_EQ(metric("tokens_per_s_per_device").judge, Judge::kRate);
  EXPECT_EQ(metric("tokens_per_s_per_device").derived_from, "step_time_median_s");
  EXPECT_EQ(metric("tflops_per_s_per_device").direction, Direction::kHigherIsBetter);
  EXPECT_TRUE(metric("params").deterministic());
  EXPECT_DOUBLE_EQ(metric("final_loss").abs_threshold, 1e-4);
  EXPECT_DOUBLE_EQ(metric("peak_memory_bytes").rel_threshold, 0.005);
  EXPECT_DOUBLE_EQ(metric("first_step_s").rel_threshold, 0.10);
  EXPECT_EQ(find("nope"), nullptr);
}

TEST(Catalogue, NamesAreUniqueAndRatesPointAtJudgedTimes) {
  std::set<std::string> names;
  for (const Metric& m : catalogue()) {
    EXPECT_TRUE(names.insert(m.name).second) << "declared twice: " << m.name;
    EXPECT_FALSE(m.label.empty()) << m.name;
    if (m.judge == Judge::kRate) {
      ASSERT_NE(find(m.derived_from), nullptr) << m.name;
      EXPECT_EQ(find(m.derived_from)->judge, Judge::kTime) << m.name;
    }
  }
  // MaxView's rows lead the console table, in its order.
  const auto console = shown_in(kConsole);
  ASSERT_GE(console.size(), 5u);
  EXPECT_EQ(console[0].label, "Parameters");
  EXPECT_EQ(console[1].label, "Final loss");
  EXPECT_EQ(console[2].label, "TFLOP/s");
  EXPECT_EQ(console[3].label, "Tok/s");
  EXPECT_EQ(console[4].label, "Avg s/step");
}

TEST(Catalogue, StoredListRoundTripsThroughRunMetrics) {
  RunMetrics m;
  m.params = 123456;
  m.final_loss = 2.5;
  m.step_time.count = 7;
  m.step_time.mean = 0.25;
  m.step_time.median = 0.24;
  m.tokens_per_s_per_device = 1000;
  m.peak_memory_bytes = 1 << 20;
  const auto list = to_list(m);
  std::map<std::string, std::optional<double>> stored(list.begin(), list.end());
  EXPECT_EQ(stored.count("tokens_per_s"), 0u);  // data-parallel only: absent, not null
  EXPECT_FALSE(stored.at("mfu"));               // no calibration: null
  const RunMetrics back = from_map(stored);
  EXPECT_EQ(back.params, m.params);
  EXPECT_EQ(back.step_time.count, 7);
  EXPECT_DOUBLE_EQ(back.step_time.median, 0.24);
  EXPECT_EQ(back.peak_memory_bytes, m.peak_memory_bytes);
  EXPECT_FALSE(back.mfu);
  // Without steady steps the step-time figures are not reported.
  RunMetrics none;
  const auto empty = to_list(none);
  for (const auto& [name, value] : empty) {
    if (name == "step_time_mean_s") {
      EXPECT_FALSE(value);
    }
  }
}

// Every tool's own figure (logs/figures.h) is a catalogue row by one rule:
// never judged, in verdict lists and --json only where a run has it, stored
// and read back through RunMetrics::tool_figures.
TEST(Catalogue, ToolFiguresAreRowsByOneRule) {
  size_t figures = 0;
  for (const logs::ToolFigures& tool : logs::tool_figures())
    for (const logs::ToolFigure& f : tool.figures) {
      ++figures;
      const Metric& m = metric(f.name);
      EXPECT_TRUE(m.tool_figure) << f.name;
      EXPECT_EQ(m.label, f.label);
      EXPECT_EQ(m.judge, Judge::kNone) << f.name;
      EXPECT_EQ(m.show, unsigned{kVerdict | kJson | kWhenPresent}) << f.name;
      EXPECT_EQ(m.direction, f.higher_is_better ? Direction::kHigherIsBetter : Direction::kLowerIsBetter);
    }
  EXPECT_GE(figures, 6u);  // MaxView's five and nanogpt's step_avg
  RunMetrics m;
  m.tool_figures["nanogpt_step_avg_s"] = 0.058;
  const auto list = to_list(m);
  std::map<std::string, std::optional<double>> stored(list.begin(), list.end());
  EXPECT_EQ(stored.at("nanogpt_step_avg_s"), 0.058);
  EXPECT_EQ(stored.count("maxview_avg_step_s"), 0u);  // a figure the run has not: no row
  EXPECT_EQ(from_map(stored).tool_figures, m.tool_figures);
  EXPECT_EQ(metric("nanogpt_step_avg_s").value(m), 0.058);
  EXPECT_FALSE(metric("maxview_final_loss").value(m));
}

TEST(Thresholds, OverridesAndRejectsUnknownNames) {
  const auto specs = with_thresholds(shown_in(kVerdict), {{"step_time_mean_s", 0.15}, {"final_loss", 1e-3}});
  EXPECT_DOUBLE_EQ(in(specs, "step_time_mean_s")->rel_threshold, 0.15);
  EXPECT_DOUBLE_EQ(in(specs, "final_loss")->abs_threshold, 1e-3);
  EXPECT_DOUBLE_EQ(in(specs, "final_loss")->rel_threshold, 0);
  EXPECT_DOUBLE_EQ(in(specs, "params")->rel_threshold, 0);  // untouched
  try {
    with_thresholds(shown_in(kVerdict), {{"step_time", 0.1}});
    FAIL() << "unknown metric accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("step_time_mean_s"), std::string::npos) << what;  // lists the known ones
    EXPECT_NE(what.find("first_step_s"), std::string::npos) << what;
  }
  EXPECT_THROW(with_thresholds(shown_in(kVerdict), {{"mfu", -0.1}}), std::invalid_argument);
  EXPECT_THROW(with_thresholds(shown_in(kVerdict), {{"wall_s", 0.1}}), std::invalid_argument);  // not judged
}

TEST(Thresholds, CaseFileNamesAreCheckedWithTheirSource) {
  RunConfig config;
  config.thresholds["step_time_mean_s"] = 0.1;
  EXPECT_NO_THROW(check_thresholds(config));
  config.thresholds["step_tme"] = 0.1;
  config.threshold_sources["step_tme"] = "cases/x.toml:9";
  try {
    check_thresholds(config);
    FAIL() << "unknown threshold accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "cases/x.toml:9");
    EXPECT_EQ(e.key(), "thresholds.step_tme");
  }
}

TEST(Thresholds, BeyondThresholdUsesRelativeAndAbsoluteParts) {
  EXPECT_TRUE(beyond_threshold(metric("step_time_mean_s"), 1.0, 1.04));
  EXPECT_FALSE(beyond_threshold(metric("step_time_mean_s"), 1.0, 1.02));
  EXPECT_FALSE(beyond_threshold(metric("final_loss"), 2.0, 2.00005));
  EXPECT_TRUE(beyond_threshold(metric("final_loss"), 2.0, 2.001));
  EXPECT_TRUE(beyond_threshold(metric("params"), 100, 101));  // any change of an exact count
}

// MFU above 100% means the calibration measured less than the run achieved: a
// measurement error, kept apart and never shown as MFU.
TEST(Mfu, AboveOneHundredPercentIsAMeasurementError) {
  RunMetrics m;
  EXPECT_TRUE(set_mfu(m, 0.3, 0.4));
  ASSERT_TRUE(m.mfu);
  EXPECT_DOUBLE_EQ(*m.mfu, 0.75);
  EXPECT_FALSE(m.mfu_over_peak);
  RunMetrics over;
  EXPECT_FALSE(set_mfu(over, 0.5, 0.4));
  EXPECT_FALSE(over.mfu);
  ASSERT_TRUE(over.mfu_over_peak);
  EXPECT_DOUBLE_EQ(*over.mfu_over_peak, 1.25);
  // Exactly the peak is still a result; no peak measured, nothing is said.
  RunMetrics at_peak, uncalibrated;
  EXPECT_TRUE(set_mfu(at_peak, 0.4, 0.4));
  EXPECT_DOUBLE_EQ(*at_peak.mfu, 1.0);
  EXPECT_TRUE(set_mfu(uncalibrated, 0.4, 0));
  EXPECT_FALSE(uncalibrated.mfu);
  EXPECT_FALSE(uncalibrated.mfu_over_peak);
  // The catalogue shows the error under its own label, and only when present.
  EXPECT_EQ(metric("mfu_over_peak").label, "MFU error (>100%)");
  EXPECT_TRUE(metric("mfu_over_peak").shown(kWhenPresent));
}

}  // namespace
}  // namespace twinbench::metrics
