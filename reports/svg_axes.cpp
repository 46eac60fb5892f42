// Axes, scales, legends and formatting shared by the SVG charts (svg_axes.h).
#include "reports/svg_axes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "reports/html.h"
#include "reports/svg.h"

namespace twinbench::html {

std::string palette_color(size_t index) {
  // Okabe-Ito, reordered: blue and vermillion first (the two implementations).
  static const char* const kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                         "#e69f00", "#56b4e9", "#000000", "#f0e442"};
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

namespace svg_detail {

bool finite(double v) { return std::isfinite(v); }

std::string fnum(double v, int precision) {
  if (!finite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";  // also turns -0 into 0
  std::string s = fmt::format("{:.{}g}", v, precision);
  const size_t e = s.find('e');
  if (e != std::string::npos) {  // e+09 -> e9, e-05 -> e-5
    std::string mant = s.substr(0, e), ex = s.substr(e + 1);
    const bool neg = !ex.empty() && ex[0] == '-';
    if (!ex.empty() && (ex[0] == '+' || ex[0] == '-')) ex.erase(0, 1);
    while (ex.size() > 1 && ex[0] == '0') ex.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + ex;
  }
  return s;
}

std::string co(double v) {
  if (!finite(v)) return "0";
  const double r = std::round(v * 10.0) / 10.0;
  if (r == std::floor(r)) return fmt::format("{}", static_cast<long long>(r));
  return fmt::format("{:.1f}", r);
}

double text_width(const std::string& text, double font_px) {
  size_t cps = 0, narrow = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    ++cps;
    if (c == '.' || c == ',' || c == 'i' || c == 'l' || c == '1' || c == ' ' || c == ':' || c == '|') ++narrow;
  }
  return font_px * (0.58 * static_cast<double>(cps - narrow) + 0.3 * static_cast<double>(narrow));
}

std::string truncate(const std::string& text, size_t max_chars) {
  size_t cps = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (cps == max_chars) return text.substr(0, i) + "\u2026";
    ++cps;
  }
  return text;
}

std::string safe_color(const std::string& color, size_t fallback_index) {
  if (color.empty() || color.size() > 40) return palette_color(fallback_index);
  const std::string lc = [&] {
    std::string s;
    for (char c : color) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }();
  if (lc[0] == '#') {
    const size_t n = lc.size() - 1;
    const bool hex = std::all_of(lc.begin() + 1, lc.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    if (hex && (n == 3 || n == 4 || n == 6 || n == 8)) return lc;
    return palette_color(fallback_index);
  }
  if (std::all_of(lc.begin(), lc.end(), [](char c) { return c >= 'a' && c <= 'z'; })) return lc;
  for (const char* fn : {"rgb(", "rgba(", "hsl(", "hsla("}) {
    const std::string f = fn;
    if (lc.compare(0, f.size(), f) == 0 && lc.back() == ')') {
      const bool ok = std::all_of(lc.begin() + static_cast<long>(f.size()), lc.end() - 1, [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '.' || c == ' ' || c == '%' ||
               c == '/' || c == '-';
      });
      if (ok) return lc;
    }
  }
  return palette_color(fallback_index);
}

namespace {

// Smallest 1-2-5 x 10^k step >= raw.
double nice_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

void label_ticks(Axis& a) {
  for (int p = 4; p <= 12; ++p) {
    a.labels.clear();
    std::set<std::string> seen;
    for (double t : a.ticks) {
      a.labels.push_back(fnum(t, p));
      seen.insert(a.labels.back());
    }
    if (seen.size() == a.labels.size()) return;
  }
}

// Of the 1-2-5 steps near (hi - lo) / (target - 1), the one whose rounded-out axis
// has a tick count near target (target-1 .. target+2) with the least wasted range.
Axis linear_axis(double lo, double hi, int target) {
  const double raw = (hi - lo) / std::max(1, target - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double best_step = nice_step(raw), best_score = 1e300;
  for (double m : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0}) {
    const double step = m * mag;
    const double a = std::floor(lo / step + 1e-9) * step, b = std::ceil(hi / step - 1e-9) * step;
    const int n = static_cast<int>(std::llround((b - a) / step)) + 1;
    const bool ok = n >= target - 1 && n <= target + 2;
    const double score = (ok ? 0 : 1e6 * std::abs(n - target)) + (b - a) / (hi - lo);
    if (score < best_score) best_score = score, best_step = step;
  }
  Axis a;
  const double step = best_step;
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  const int n = static_cast<int>(std::llround((a.hi - a.lo) / step));
  for (int i = 0; i <= n && i <= 50; ++i) {
    double t = a.lo + i * step;
    if (std::fabs(t) < step * 1e-9) t = 0;
    a.ticks.push_back(t);
  }
  return a;
}

Axis log_axis(double lo, double hi) {
  Axis a;
  a.log = true;
  const int k0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int k1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  auto build = [&](std::vector<double> mantissas) {
    std::vector<double> cand;
    for (int k = k0; k <= k1; ++k)
      for (double m : mantissas) cand.push_back(m * std::pow(10.0, k));
    double alo = cand.front(), ahi = cand.back();
    for (double c : cand) if (c <= lo * (1 + 1e-9)) alo = c;
    for (auto it = cand.rbegin(); it != cand.rend(); ++it) if (*it >= hi * (1 - 1e-9)) ahi = *it;
    std::vector<double> ticks;
    for (double c : cand) if (c >= alo * (1 - 1e-9) && c <= ahi * (1 + 1e-9)) ticks.push_back(c);
    return std::make_pair(std::make_pair(alo, ahi), ticks);
  };
  auto r = build({1, 2, 5});
  if (r.second.size() < 3) r = build({1, 1.5, 2, 3, 4, 5, 6, 8});
  if (r.second.size() > 7) r = build({1});
  a.lo = r.first.first;
  a.hi = r.first.second;
  const size_t every = (r.second.size() + 6) / 7;  // many decades: thin them
  for (size_t i = 0; i < r.second.size(); i += every) a.ticks.push_back(r.second[i]);
  return a;
}

}  // namespace

Axis nice_axis(double lo, double hi, bool log, int target) {
  if (!finite(lo) || !finite(hi) || lo > hi) lo = 0, hi = 1, log = false;
  if (log && (lo <= 0 || hi <= 0)) log = false;
  Axis a;
  if (log) {
    if (hi <= lo * (1 + 1e-12)) lo /= 1.5, hi *= 1.5;
    a = log_axis(lo, hi);
  } else {
    const double span = hi - lo, mag = std::max(std::fabs(lo), std::fabs(hi));
    if (!(span > mag * 1e-12) || !finite(span)) {  // constant (or nearly): centre it
      const double d = mag > 0 ? mag * 0.1 : 1.0;
      lo -= d;
      hi += d;
    }
    a = linear_axis(lo, hi, target);
  }
  label_ticks(a);
  return a;
}

double Scale::operator()(double v) const {
  double t;
  if (log) {
    const double l0 = std::log10(lo), l1 = std::log10(hi);
    t = l1 > l0 ? (std::log10(v) - l0) / (l1 - l0) : 0.5;
  } else {
    t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
  if (!finite(t)) t = 0.5;
  return px0 + t * (px1 - px0);
}

std::string svg_open(int width, int height, const std::string& title, const std::string& css_class,
                     bool fixed_size) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"{}\" viewBox=\"0 0 {} {}\" ", escape(css_class), width,
      height);
  if (fixed_size) out += fmt::format("width=\"{}\" height=\"{}\" ", width, height);
  else out += fmt::format("style=\"width:100%;height:auto;max-width:{}px\" ", width);  // shrinks, never blows up
  out += "role=\"img\" aria-label=\"" + escape(title) + "\">";  // text inherits the page's font
  out += "<title>" + escape(title) + "</title>";
  return out;
}

std::string draw_title(const std::string& title, double x, double y) {
  if (title.empty()) return {};
  return fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"600\" fill=\"{}\">{}</text>", co(x),
                     co(y), kInk, escape(title));
}

double y_axis_width(const Axis& axis, bool has_label) {
  double w = 0;
  for (const auto& l : axis.labels) w = std::max(w, text_width(l, 12));
  return w + 8 + (has_label ? 18 : 0);
}

std::string draw_y_axis(const Axis& axis, const Scale& s, const Frame& f, const std::string& label, double label_x) {
  std::string out = "<g class=\"y-axis\">";
  for (size_t i = 0; i < axis.ticks.size(); ++i) {
    const double y = s(axis.ticks[i]);
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>", co(f.left),
                       co(f.right), co(y), co(y), i == 0 ? kAxis : kGrid);
    out += fmt::format("<text class=\"ytick\" x=\"{}\" y=\"{}\" dy=\"0.32em\" text-anchor=\"end\" font-size=\"12\" "
                       "fill=\"{}\">{}</text>", co(f.left - 6), co(y), kMuted, escape(axis.labels[i]));
  }
  if (!label.empty()) {
    const double cy = (f.top + f.bottom) / 2;
    out += fmt::format("<text x=\"{0}\" y=\"{1}\" transform=\"rotate(-90 {0} {1})\" text-anchor=\"middle\" "
                       "font-size=\"13\" fill=\"{2}\">{3}</text>", co(label_x), co(cy), kMuted, escape(label));
  }
  return out + "</g>";
}

std::string draw_x_axis(const Axis& axis, const Scale& s, const Frame& f, const std::string& label, double label_y) {
  std::string out = "<g class=\"x-axis\">";
  out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\"/>", co(f.left), co(f.right),
                     co(f.bottom), co(f.bottom), kAxis);
  for (size_t i = 0; i < axis.ticks.size(); ++i) {
    const double x = s(axis.ticks[i]);
    out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>", co(x), co(f.top),
                       co(f.bottom), kGrid);
    out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>", co(x), co(f.bottom),
                       co(f.bottom + 4), kAxis);
    out += fmt::format("<text class=\"xtick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" "
                       "fill=\"{}\">{}</text>", co(x), co(f.bottom + 17), kMuted, escape(axis.labels[i]));
  }
  if (!label.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"{}\">{}</text>",
                       co((f.left + f.right) / 2), co(label_y), kMuted, escape(label));
  return out + "</g>";
}

namespace {
constexpr double kSwatch = 22, kGap = 16, kLegendFont = 12;
double item_width(const LegendItem& it) { return kSwatch + 6 + text_width(it.name, kLegendFont) + kGap; }
}  // namespace

int legend_rows(const std::vector<LegendItem>& items, double max_width) {
  if (items.empty()) return 0;
  int rows = 1;
  double x = 0;
  for (const auto& it : items) {
    const double w = item_width(it);
    if (x > 0 && x + w > max_width) ++rows, x = 0;
    x += w;
  }
  return rows;
}

std::string draw_legend(const std::vector<LegendItem>& items, double x0, double y0, double max_width) {
  if (items.empty()) return {};
  std::string out = "<g class=\"legend\">";
  double x = 0, y = y0;
  for (const auto& it : items) {
    const double w = item_width(it);
    if (x > 0 && x + w > max_width) y += 18, x = 0;
    const double sx = x0 + x, sy = y - 4;
    const std::string& c = it.color;
    if (it.kind == "line" || it.kind == "dashed") {
      out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>",
                         co(sx), co(sx + kSwatch), co(sy), co(sy), c,
                         it.kind == "dashed" ? " stroke-dasharray=\"6 3\"" : "");
    } else if (it.kind == "band") {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"{}\" fill-opacity=\"0.14\"/>"
                         "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-dasharray=\"5 3\"/>",
                         co(sx), co(sy - 5), co(kSwatch), c, co(sx), co(sx + kSwatch), co(sy), co(sy), kMuted);
    } else if (it.kind == "marker") {
      out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\" "
                         "stroke-dasharray=\"3 2\"/>", co(sx + kSwatch / 2), co(sy - 6), co(sy + 6), c);
    } else {
      const bool hollow = it.kind == "hollow";
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>",
                         co(sx + kSwatch / 2), co(sy), hollow ? "#fff" : c, c, hollow ? 2 : 1);
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\">{}</text>", co(sx + kSwatch + 6), co(y),
                       kLegendFont, kInk, escape(it.name));
    x += w;
  }
  return out + "</g>";
}

}  // namespace svg_detail
}  // namespace twinbench::html
