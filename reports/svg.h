// Inline SVG charts for the HTML reports, returned as strings to embed directly in
// a page: loss curves (line_chart), step-time distributions (distribution_chart),
// nightly trends with a baseline band (trend_chart) and sparklines for index
// tables. Every chart has a fixed viewBox, scales to its container
// (width:100%), carries role="img" and an escaped <title>, references nothing
// external, escapes every label, skips NaN/Inf points and survives empty or
// constant input.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace twinbench::html {

struct Series {
  std::string name;        // legend label (plain text)
  std::vector<double> x;   // empty: 0, 1, 2, ... ; otherwise paired with y (extra values ignored)
  std::vector<double> y;
  std::string color;       // CSS colour (#rgb, #rrggbb, a name, rgb()/hsl()); empty or unsafe: palette
  bool dashed = false;     // draw with a dash pattern (tells overlaid curves apart in print/greyscale)
};

struct ChartOptions {
  std::string title;    // drawn above the plot and used as the accessible <title>
  std::string x_label;
  std::string y_label;
  int width = 640;      // viewBox size (user units ~ CSS px at 100%)
  int height = 280;
  bool log_y = false;   // logarithmic y axis; non-positive values are skipped
};

// One polyline per series (in its colour, dashed if asked), ~5 "nice" ticks on each
// axis (1-2-5 steps), tick labels, axis labels and a legend.
std::string line_chart(const std::vector<Series>& series, const ChartOptions& o);

// One horizontal box plot per (name, samples) group on a shared x axis: whiskers
// p10..p90, box p25..p75, a median bar, and a dot for every sample when a group
// has at most 200 of them (else min and max only). o.x_label names the value axis.
std::string distribution_chart(const std::vector<std::pair<std::string, std::vector<double>>>& groups,
                               const ChartOptions& o);

struct TrendPoint {
  std::string label;  // x tick label, e.g. a date or a short commit
  double value;
  std::string flag;   // "normal" | "suspicious" | "regression" | "improvement"
};

// A nightly series as a line with points; the baseline (one optional value per
// point) as a dashed line inside a shaded band of +-band_fraction; flagged points
// drawn distinctly (suspicious: hollow amber, regression: red, improvement:
// green); a vertical marker before each index in step_changes; x tick labels from
// the point labels, thinned when there are many.
std::string trend_chart(const std::vector<TrendPoint>& points, const std::vector<std::optional<double>>& baseline,
                        double band_fraction, const std::vector<size_t>& step_changes, const ChartOptions& o);

// One ranked bar of a contribution chart: a value from zero, its interval as a
// whisker where known; `highlight` bars are drawn solid (e.g. significant),
// the others hollow; `note` is printed right of the plot ("71%").
struct Bar {
  std::string label;
  double value = 0;
  std::optional<double> low, high;
  bool highlight = false;
  std::string note;
};

// Horizontal bars from a shared zero line in the order given (rank order), a
// label per row on the left, ~5 ticks on the value axis (o.x_label names it),
// positive values in red and negative in green (a longer step is worse).
// Height follows the bars (o.height ignored).
std::string bar_chart(const std::vector<Bar>& bars, const ChartOptions& o);

// A tiny axis-less line for table cells, the last point marked; fixed pixel size.
std::string sparkline(const std::vector<double>& values, int width = 120, int height = 24);

// The palette used when a series or group has no colour (colour-blind safe).
std::string palette_color(size_t index);

}  // namespace twinbench::html
