// twinbench_changepoints: the change-point detector of harness/stats/changepoint.h
// over series given as JSON lines, for measurement campaigns
// (ci/campaigns/nightly_campaign.py) and for trying the kernel by hand. Each input
// line is {"id": "...", "values": [night 0, night 1, ...]}; each output line is
// {"id": ..., "nights": n, "segments_tested": ..., "candidates_tested": ...,
//  "change_points": [{"index", "before", "after", "change", "change_low",
//  "change_high", "p_value", "nights_before", "nights_after"[, "raised_at"]}]}.
//
//   twinbench_changepoints [--alpha A] [--min-segment M] [--min-change C]
//                          [--confidence P] [--nightly FROM] [FILE]     (stdin without FILE)
//
// --nightly FROM replays the series as a nightly job would: the first FROM nights are
// analysed at once, then one night at a time is added with update_change_points, and
// each change point says on which night it was raised ("raised_at": the series length
// when it first appeared). Without it the whole series is analysed once.
// Bad input is an error naming the file, the line and the key (exit 2).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stats/changepoint.h"

namespace {

using twinbench::stats::ChangePointOptions;
using twinbench::stats::ChangePoints;

struct Args {
  ChangePointOptions options;
  size_t nightly_from = 0;  // 0: analyse once
  std::string file;         // empty: stdin
};

double number_arg(const std::string& flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0') throw std::invalid_argument(flag + ": '" + text + "' is not a number");
  return v;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--alpha") a.options.alpha = number_arg(flag, value());
    else if (flag == "--min-segment") a.options.min_segment = static_cast<size_t>(number_arg(flag, value()));
    else if (flag == "--min-change") a.options.min_relative_change = number_arg(flag, value());
    else if (flag == "--confidence") a.options.confidence = number_arg(flag, value());
    else if (flag == "--nightly") a.nightly_from = static_cast<size_t>(number_arg(flag, value()));
    else if (flag == "--help" || flag == "-h") {
      std::printf("usage: twinbench_changepoints [--alpha A] [--min-segment M] [--min-change C] [--confidence P] "
                  "[--nightly FROM] [FILE]\n");
      std::exit(0);
    } else if (!flag.empty() && flag[0] == '-') throw std::invalid_argument("unknown flag " + flag);
    else a.file = flag;
  }
  return a;
}

nlohmann::json point_json(const twinbench::stats::ChangePoint& c) {
  return {{"index", c.index},           {"before", c.before},          {"after", c.after},
          {"change", c.change},         {"change_low", c.change_low},  {"change_high", c.change_high},
          {"p_value", c.p_value},       {"nights_before", c.nights_before}, {"nights_after", c.nights_after}};
}

nlohmann::json analyse(const std::vector<double>& values, const Args& a) {
  nlohmann::json out;
  ChangePoints cps;
  std::map<size_t, size_t> raised_at;  // change point index -> series length when it appeared
  size_t segments = 0, candidates = 0;
  if (a.nightly_from == 0 || a.nightly_from >= values.size()) {
    cps = twinbench::stats::detect_change_points(values, a.options);
    segments = cps.segments_tested;
    candidates = cps.candidates_tested;
  } else {
    std::vector<double> prefix(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(a.nightly_from));
    cps = twinbench::stats::detect_change_points(prefix, a.options);
    for (const auto& c : cps.points) raised_at.emplace(c.index, prefix.size());
    segments = cps.segments_tested;
    candidates = cps.candidates_tested;
    for (size_t n = a.nightly_from; n < values.size(); ++n) {
      prefix.push_back(values[n]);
      cps = twinbench::stats::update_change_points(prefix, cps, a.options);
      segments += cps.segments_tested;
      candidates += cps.candidates_tested;
      for (const auto& c : cps.points) raised_at.emplace(c.index, prefix.size());
    }
  }
  out["nights"] = cps.nights;
  out["segments_tested"] = segments;
  out["candidates_tested"] = candidates;
  out["change_points"] = nlohmann::json::array();
  for (const auto& c : cps.points) {
    nlohmann::json p = point_json(c);
    if (a.nightly_from > 0) p["raised_at"] = raised_at.count(c.index) ? raised_at[c.index] : cps.nights;
    out["change_points"].push_back(p);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twinbench_changepoints: %s\n", e.what());
    return 2;
  }
  std::ifstream file;
  if (!args.file.empty()) {
    file.open(args.file);
    if (!file) {
      std::fprintf(stderr, "twinbench_changepoints: %s: cannot open\n", args.file.c_str());
      return 2;
    }
  }
  std::istream& in = args.file.empty() ? std::cin : file;
  const std::string name = args.file.empty() ? "stdin" : args.file;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = name + ":" + std::to_string(n);
    try {
      const auto j = nlohmann::json::parse(line);
      if (!j.is_object()) throw std::invalid_argument("a line must be a JSON object");
      if (!j.contains("values") || !j["values"].is_array())
        throw std::invalid_argument("'values' must be an array of numbers");
      std::vector<double> values;
      for (size_t i = 0; i < j["values"].size(); ++i) {
        if (!j["values"][i].is_number())
          throw std::invalid_argument("'values'[" + std::to_string(i) + "] is not a number");
        values.push_back(j["values"][i].get<double>());
      }
      nlohmann::json out = analyse(values, args);
      out["id"] = j.contains("id") ? j["id"] : nlohmann::json(n);
      std::cout << out.dump() << '\n';
    } catch (const std::exception& e) {
      std::fprintf(stderr, "twinbench_changepoints: %s: %s\n", where.c_str(), e.what());
      return 2;
    }
  }
  return 0;
}
