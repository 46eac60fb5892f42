// The table of log formats (harness/logs/formats.h): every registered format
// round-trips its own sample record through detection (where it is detected)
// and its parser; names are unique; the help text, the error for an unknown
// name and the detection error list exactly the table; choices with a wrong
// argument are refused; an [external.NAME] format is checked against it.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "harness/base/config.h"
#include "harness/logs/detect.h"
#include "harness/logs/formats.h"
#include "harness/logs/parse.h"

namespace twinbench::logs {
namespace {

std::string choice_of(const LogFormat& f) { return f.argument.empty() ? f.name : f.name + ":" + f.sample_argument; }

TEST(LogFormats, NamesAreUniqueAndEachHasAParserAnExampleAndASample) {
  std::set<std::string> names;
  ASSERT_GE(log_formats().size(), 4u);
  for (const LogFormat& f : log_formats()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(names.insert(f.name).second) << "registered twice";
    EXPECT_NE(f.name, "auto");
    EXPECT_EQ(f.name.find(':'), std::string::npos);
    EXPECT_TRUE(f.parse);
    EXPECT_FALSE(f.example.empty());
    EXPECT_FALSE(f.sample.empty());
    EXPECT_EQ(f.argument.empty(), f.sample_argument.empty()) << "a format with an argument samples with one";
    // A format that takes an argument has no fixed signature: never auto-detected.
    if (!f.argument.empty()) {
      EXPECT_TRUE(f.record.empty());
    }
  }
}

TEST(LogFormats, EverySampleRoundTripsThroughItsParserAndDetection) {
  for (const LogFormat& f : log_formats()) {
    SCOPED_TRACE(f.name);
    std::istringstream in(f.sample + "\n");
    const ParsedLog log = parse_log(in, "sample.log", choice_of(f));
    EXPECT_EQ(log.format, f.name);
    ASSERT_EQ(log.steps.size(), 1u);
    EXPECT_EQ(log.steps[0].step, 3) << "every sample is step 3";
    EXPECT_EQ(log.steps[0].line, 1);
    if (f.record.empty()) continue;
    std::istringstream again(f.sample + "\n");
    std::string consumed;
    const Detection d = detect_format(again, "sample.log", consumed);
    EXPECT_EQ(d.format, &f) << "detected as " << d.format->name;
    EXPECT_FALSE(d.from_hint);
    EXPECT_EQ(d.line, 1);
    // Auto-detection parses it the same.
    std::istringstream auto_in(f.sample + "\n");
    EXPECT_EQ(parse_log(auto_in, "sample.log", "auto").format, f.name);
    // Live parsing finds it too.
    std::string shown;
    EXPECT_TRUE(record_lines(choose_format(choice_of(f)))(view_line(f.sample, shown)));
  }
}

TEST(LogFormats, HelpAndErrorsListExactlyTheTable) {
  std::string expected;
  for (const LogFormat& f : log_formats())
    expected += (expected.empty() ? "" : ", ") + f.name + (f.argument.empty() ? "" : ":" + f.argument);
  EXPECT_EQ(format_choices(), expected);
  EXPECT_EQ(log_format_help(), expected + " or auto (detect it from the content)");
  try {
    choose_log_format("tensorboard");
    FAIL() << "an unknown format was accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown log format \"tensorboard\"; expected one of " + expected + " or auto (detect it from the content)");
  }
  EXPECT_FALSE(choose_log_format("auto").has_value());
  // The detection error names every format it tried, and each one it never tries.
  std::istringstream in("just some text\n");
  std::string consumed;
  try {
    detect_format(in, "notes.txt", consumed);
    FAIL() << "plain text was detected";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    for (const LogFormat& f : log_formats()) {
      const std::string listed = f.record.empty() ? "--format " + f.name + ":" + f.argument : f.name + " " + f.example;
      EXPECT_NE(what.find(listed), std::string::npos) << what;
    }
  }
}

TEST(LogFormats, ArgumentsOnlyWhereAFormatTakesOne) {
  for (const LogFormat& f : log_formats()) {
    SCOPED_TRACE(f.name);
    if (f.argument.empty()) {
      EXPECT_EQ(choose_format(f.name).format, &f);
      EXPECT_THROW(choose_format(f.name + ":x"), FormatError);
    } else {
      EXPECT_THROW(choose_format(f.name), FormatError);
      EXPECT_THROW(choose_format(f.name + ":"), FormatError);
      const FormatChoice c = choose_format(choice_of(f));
      EXPECT_EQ(c.format, &f);
      EXPECT_EQ(c.argument, f.sample_argument);
    }
  }
}

TEST(LogFormats, ExternalSectionsAreCheckedAgainstTheTable) {
  std::map<std::string, ExternalSpec> externals;
  externals["ok"].format = "jsonl";
  EXPECT_NO_THROW(check_external_formats(externals));
  externals["bad"].format = "csv";
  externals["bad"].format_where = "cases/x.toml:7";
  try {
    check_external_formats(externals);
    FAIL() << "csv was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "cases/x.toml:7");
    EXPECT_EQ(e.key(), "external.bad.format");
    EXPECT_NE(std::string(e.what()).find("unknown log format \"csv\" (known: " + format_choices() + ")"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace twinbench::logs
