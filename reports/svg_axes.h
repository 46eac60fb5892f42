// Internal helpers shared by the SVG charts (svg.cpp): number and coordinate
// formatting, "nice" 1-2-5 axes (linear and log), scales, axis/legend drawing and
// colour sanitising. Not part of the public reports API.
#pragma once

#include <string>
#include <vector>

namespace twinbench::html::svg_detail {

// Shared palette and ink colours (match the stylesheet in html.cpp).
inline constexpr const char* kInk = "#1f2328";
inline constexpr const char* kMuted = "#59636e";
inline constexpr const char* kGrid = "#e5e8eb";
inline constexpr const char* kAxis = "#8c959f";
inline constexpr const char* kGreen = "#1a7f37";
inline constexpr const char* kRed = "#cf222e";
inline constexpr const char* kAmber = "#bf8700";
inline constexpr const char* kBand = "#0969da";
inline constexpr const char* kStep = "#8250df";

bool finite(double v);

// "{:.4g}" with a shorter exponent ("1.104e+09" -> "1.104e9") and no "-0".
std::string fnum(double v, int precision = 4);
// A coordinate with at most one decimal ("12.5", "12").
std::string co(double v);
// Approximate rendered width of text in px for a sans-serif font of size font_px.
double text_width(const std::string& text, double font_px);
// Keeps at most max_chars code points, appending "…" when cut.
std::string truncate(const std::string& text, size_t max_chars);

// A CSS colour safe inside an attribute (hex, a plain name, rgb()/hsl() with
// numbers), else palette entry `fallback_index`.
std::string safe_color(const std::string& color, size_t fallback_index);

struct Axis {
  double lo = 0, hi = 1;       // the drawn range
  bool log = false;
  std::vector<double> ticks;   // inside [lo, hi]
  std::vector<std::string> labels;  // one per tick, distinct
};
// ~target ticks on 1-2-5 steps covering [lo, hi]; copes with lo == hi, non-finite
// input (-> [0, 1]) and, for log, non-positive bounds.
Axis nice_axis(double lo, double hi, bool log, int target = 5);

// Maps data values to pixels along [px0, px1] (px1 < px0 for a y axis).
struct Scale {
  double lo = 0, hi = 1, px0 = 0, px1 = 1;
  bool log = false;
  double operator()(double v) const;
};

// The plot rectangle inside the viewBox.
struct Frame {
  double left, top, right, bottom;
};

// <svg ...><title>..</title>: viewBox 0 0 w h, role="img", aria-label, class.
std::string svg_open(int width, int height, const std::string& title, const std::string& css_class,
                     bool fixed_size = false);
// The visible title (top left, bold) when non-empty.
std::string draw_title(const std::string& title, double x, double y);
// Horizontal grid lines + tick labels on the left of the frame, and the rotated
// y label at x_label_pos when non-empty.
std::string draw_y_axis(const Axis& axis, const Scale& s, const Frame& f, const std::string& label,
                        double label_x);
// Vertical grid lines, tick labels below the frame (class "xtick"), x label centred
// at label_y when non-empty.
std::string draw_x_axis(const Axis& axis, const Scale& s, const Frame& f, const std::string& label,
                        double label_y);
// Width needed on the left of the plot for the y tick labels (+ y label).
double y_axis_width(const Axis& axis, bool has_label);

struct LegendItem {
  std::string name;
  std::string color;
  std::string kind;  // "line", "dashed", "dot", "hollow", "band", "marker"
};
// Rows the items need when laid out left to right in max_width.
int legend_rows(const std::vector<LegendItem>& items, double max_width);
// Draws them from (x, y) (baseline of the first row), 18 px per row.
std::string draw_legend(const std::vector<LegendItem>& items, double x, double y, double max_width);


}  // namespace twinbench::html::svg_detail
