// The four inline SVG charts of the reports (svg.h); axes, legends and number
// formatting live in svg_axes.cpp.
#include "reports/svg.h"

#include "harness/stats/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "reports/html.h"
#include "reports/svg_axes.h"

namespace twinbench::html {

using namespace svg_detail;  // NOLINT: this file's own helpers

namespace {

constexpr double kPad = 10;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Pt {
  double x, y;
};

struct Layout {
  Frame f;
  double title_y, legend_y, ylabel_x, xlabel_y;
};

ChartOptions sanitized(const ChartOptions& in) {
  ChartOptions o = in;
  o.width = std::clamp(o.width, 160, 4000);
  o.height = std::clamp(o.height, 100, 3000);
  return o;
}

// Title, then legend rows, then the plot; y tick labels on the left, x below.
Layout layout(const ChartOptions& o, double left_width, const std::vector<LegendItem>& legend) {
  Layout l{};
  double top = kPad;
  if (!o.title.empty()) l.title_y = top + 12, top += 24;
  const double left = kPad + left_width, right = o.width - kPad - 8;
  const int rows = legend_rows(legend, right - left);
  l.legend_y = top + 9;
  if (rows > 0) top += rows * 18 + 2;
  top += 8;
  double bottom = o.height - kPad - 16 - (o.x_label.empty() ? 0 : 20);
  bottom = std::max(bottom, top + 20);
  l.f = Frame{left, top, right, bottom};
  l.ylabel_x = kPad + 9;
  l.xlabel_y = bottom + 38;
  return l;
}

std::string no_data(const Frame& f) {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"{}\">no data</text>",
                     co((f.left + f.right) / 2), co((f.top + f.bottom) / 2), kMuted);
}

// Keeps a long series drawable: per pixel column the first, min, max and last point.
std::vector<Pt> decimate(const std::vector<Pt>& px) {
  if (px.size() <= 2000) return px;
  std::vector<Pt> out;
  size_t i = 0;
  while (i < px.size()) {
    const long col = std::lround(px[i].x);
    size_t j = i, lo = i, hi = i;
    while (j < px.size() && std::lround(px[j].x) == col) {
      if (px[j].y < px[lo].y) lo = j;
      if (px[j].y > px[hi].y) hi = j;
      ++j;
    }
    const size_t keep[] = {i, std::min(lo, hi), std::max(lo, hi), j - 1};
    for (size_t k = 0; k < 4; ++k)
      if (k == 0 || keep[k] != keep[k - 1]) out.push_back(px[keep[k]]);
    i = j;
  }
  return out;
}

std::string points_attr(const std::vector<Pt>& px) {
  std::string s;
  s.reserve(px.size() * 12);
  for (const auto& p : px) {
    if (!s.empty()) s += ' ';
    s += co(p.x);
    s += ',';
    s += co(p.y);
  }
  return s;
}

}  // namespace

std::string line_chart(const std::vector<Series>& series, const ChartOptions& in) {
  const ChartOptions o = sanitized(in);
  std::vector<std::vector<Pt>> data(series.size());
  double xlo = kInf, xhi = -kInf, ylo = kInf, yhi = -kInf;
  bool any_positive = false;
  for (const auto& s : series)
    for (double v : s.y) any_positive = any_positive || (finite(v) && v > 0);
  const bool log = o.log_y && any_positive;
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    const size_t n = s.x.empty() ? s.y.size() : std::min(s.x.size(), s.y.size());
    for (size_t j = 0; j < n; ++j) {
      const double x = s.x.empty() ? static_cast<double>(j) : s.x[j], y = s.y[j];
      if (!finite(x) || !finite(y) || (log && y <= 0)) continue;  // skip, the line joins its neighbours
      data[i].push_back({x, y});
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  }
  const bool empty = !(xlo <= xhi);
  const Axis xa = empty ? nice_axis(0, 1, false) : nice_axis(xlo, xhi, false);
  const Axis ya = empty ? nice_axis(0, 1, false) : nice_axis(ylo, yhi, log);

  std::vector<LegendItem> legend;
  std::vector<std::string> colors;
  for (size_t i = 0; i < series.size(); ++i) {
    colors.push_back(safe_color(series[i].color, i));
    const std::string name = series[i].name.empty() ? fmt::format("series {}", i + 1) : series[i].name;
    legend.push_back({name, colors.back(), series[i].dashed ? "dashed" : "line"});
  }
  const Layout l = layout(o, y_axis_width(ya, !o.y_label.empty()), legend);
  const Scale sx{xa.lo, xa.hi, l.f.left, l.f.right, false};
  const Scale sy{ya.lo, ya.hi, l.f.bottom, l.f.top, ya.log};

  std::string out = svg_open(o.width, o.height, o.title.empty() ? "line chart" : o.title, "chart line-chart");
  out += draw_title(o.title, kPad, l.title_y);
  out += draw_y_axis(ya, sy, l.f, o.y_label, l.ylabel_x);
  out += draw_x_axis(xa, sx, l.f, o.x_label, l.xlabel_y);
  out += draw_legend(legend, l.f.left, l.legend_y, l.f.right - l.f.left);
  if (empty) out += no_data(l.f);
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<Pt> px;
    px.reserve(data[i].size());
    for (const auto& p : data[i]) px.push_back({sx(p.x), sy(p.y)});
    if (px.size() == 1) {
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>", co(px[0].x), co(px[0].y), colors[i]);
    } else if (px.size() > 1) {
      out += fmt::format("<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                         "stroke-linejoin=\"round\" stroke-linecap=\"round\"{}/>", points_attr(decimate(px)),
                         colors[i], series[i].dashed ? " stroke-dasharray=\"7 4\"" : "");
    }
  }
  return out + "</svg>";
}

std::string distribution_chart(const std::vector<std::pair<std::string, std::vector<double>>>& groups,
                               const ChartOptions& in) {
  ChartOptions o = sanitized(in);
  constexpr double kRow = 54, kBox = 16;  // per group: box on top, a strip of dots below
  std::vector<std::vector<double>> sorted(groups.size());
  double lo = kInf, hi = -kInf;
  for (size_t i = 0; i < groups.size(); ++i) {
    for (double v : groups[i].second)
      if (finite(v)) sorted[i].push_back(v);
    std::sort(sorted[i].begin(), sorted[i].end());
    if (!sorted[i].empty()) lo = std::min(lo, sorted[i].front()), hi = std::max(hi, sorted[i].back());
  }
  const bool empty = !(lo <= hi);
  const Axis xa = empty ? nice_axis(0, 1, false) : nice_axis(lo, hi, false);

  double label_w = 0;
  for (const auto& g : groups) label_w = std::max(label_w, text_width(truncate(g.first, 28), 13));
  label_w = std::min(label_w + 14, o.width * 0.3);
  const double note_w = 132;  // "median 0.2312 · n 1000" on the right
  const double top = kPad + (o.title.empty() ? 0 : 24) + 18;
  const size_t rows = std::max<size_t>(groups.size(), 1);
  const Frame f{kPad + label_w, top, o.width - kPad - note_w, top + rows * kRow};
  o.height = static_cast<int>(f.bottom + 22 + (o.x_label.empty() ? 0 : 20) + kPad);
  const Scale sx{xa.lo, xa.hi, f.left, f.right, false};

  std::string out = svg_open(o.width, o.height, o.title.empty() ? "distribution" : o.title, "chart dist-chart");
  out += draw_title(o.title, kPad, kPad + 12);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\">box p25\u2013p75 \u00b7 whiskers "
                     "p10\u2013p90 \u00b7 bar median \u00b7 \u25c7 mean \u00b7 dots: samples</text>",
                     co(f.left), co(top - 7), kMuted);
  out += draw_x_axis(xa, sx, f, o.x_label, f.bottom + 38);
  if (empty) out += no_data(f);
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& v = sorted[i];
    const double cy = f.top + static_cast<double>(i) * kRow + 19;  // box centre
    const std::string c = palette_color(i);
    out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" font-size=\"13\" fill=\"{}\">{}</text>", co(kPad),
                       co(cy), kInk, escape(truncate(groups[i].first, 28)));
    if (v.empty()) {
      out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" font-size=\"12\" fill=\"{}\">no samples</text>",
                         co(f.left + 6), co(cy), kMuted);
      continue;
    }
    const double q10 = sx(stats::quantile(v, 0.10)), q25 = sx(stats::quantile(v, 0.25)), med = stats::quantile(v, 0.5);
    const double q75 = sx(stats::quantile(v, 0.75)), q90 = sx(stats::quantile(v, 0.90));
    double mean = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    out += fmt::format("<g class=\"group\"><line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"1.5\"/>", co(q10), co(q90), co(cy), co(cy), c);
    for (double x : {q10, q90})
      out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\"/>",
                         co(x), co(cy - 6), co(cy + 6), c);
    out += fmt::format("<rect class=\"box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\" "
                       "fill-opacity=\"0.16\" stroke=\"{}\" stroke-width=\"1.5\"/>", co(q25), co(cy - kBox / 2),
                       co(std::max(q75 - q25, 0.0)), co(kBox), c, c);
    const bool all_dots = v.size() <= 200;
    for (size_t k = 0; k < v.size(); ++k) {
      if (!all_dots && k != 0 && k + 1 != v.size()) continue;  // many samples: only the extremes
      const double jitter = std::fmod(static_cast<double>(k) * 0.6180339887, 1.0) * 12;  // deterministic
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.2\" fill=\"{}\" fill-opacity=\"0.5\"/>", co(sx(v[k])),
                         co(cy + kBox / 2 + 6 + jitter), c);
    }
    const double mx = sx(mean);
    out += fmt::format("<line class=\"median\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" "
                       "stroke-width=\"2.5\"/>", co(sx(med)), co(cy - kBox / 2 - 3), co(cy + kBox / 2 + 3), kInk);
    out += fmt::format("<path class=\"mean\" d=\"M{} {}l4.5 4.5l-4.5 4.5l-4.5 -4.5z\" fill=\"#fff\" stroke=\"{}\" "
                       "stroke-width=\"1.25\"/>", co(mx), co(cy - 4.5), kInk);
    out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" font-size=\"12\" fill=\"{}\">median {} \u00b7 n {}"
                       "</text></g>", co(f.right + 10), co(cy), kMuted, fnum(med), v.size());
  }
  return out + "</svg>";
}

std::string trend_chart(const std::vector<TrendPoint>& points, const std::vector<std::optional<double>>& baseline,
                        double band_fraction, const std::vector<size_t>& step_changes, const ChartOptions& in) {
  const ChartOptions o = sanitized(in);
  const size_t n = points.size();
  const double band = finite(band_fraction) ? std::min(std::fabs(band_fraction), 10.0) : 0.0;
  auto base = [&](size_t i) -> std::optional<double> {
    if (i < baseline.size() && baseline[i] && finite(*baseline[i])) return baseline[i];
    return std::nullopt;
  };
  double lo = kInf, hi = -kInf;
  bool has_base = false, flags[3] = {false, false, false};
  for (size_t i = 0; i < n; ++i) {
    if (finite(points[i].value)) lo = std::min(lo, points[i].value), hi = std::max(hi, points[i].value);
    if (const auto b = base(i)) {
      has_base = true;
      const double a = *b * (1 - band), c = *b * (1 + band);
      lo = std::min({lo, a, c}), hi = std::max({hi, a, c});
    }
    flags[0] |= points[i].flag == "suspicious";
    flags[1] |= points[i].flag == "regression";
    flags[2] |= points[i].flag == "improvement";
  }
  const bool empty = !(lo <= hi);
  const Axis ya = empty ? nice_axis(0, 1, false) : nice_axis(lo, hi, o.log_y && lo > 0);
  const std::string color = palette_color(0);

  std::vector<LegendItem> legend{{"value", color, "line"}};
  if (has_base) legend.push_back({"baseline \u00b1" + fnum(band * 100, 3) + "%", kBand, "band"});
  if (flags[0]) legend.push_back({"suspicious", kAmber, "hollow"});
  if (flags[1]) legend.push_back({"regression", kRed, "dot"});
  if (flags[2]) legend.push_back({"improvement", kGreen, "dot"});
  if (!step_changes.empty()) legend.push_back({"step change", kStep, "marker"});
  const Layout l = layout(o, y_axis_width(ya, !o.y_label.empty()), legend);
  const Frame& f = l.f;
  const Scale sx{-0.5, std::max<double>(static_cast<double>(n), 1.0) - 0.5, f.left, f.right, false};
  const Scale sy{ya.lo, ya.hi, f.bottom, f.top, ya.log};
  auto X = [&](double i) { return co(sx(i)); };

  std::string out = svg_open(o.width, o.height, o.title.empty() ? "trend" : o.title, "chart trend-chart");
  out += draw_title(o.title, kPad, l.title_y);
  out += draw_y_axis(ya, sy, f, o.y_label, l.ylabel_x);
  out += draw_legend(legend, f.left, l.legend_y, f.right - f.left);
  // x axis: the point labels, every k-th so they do not collide.
  double label_w = 0;
  for (const auto& p : points) label_w = std::max(label_w, text_width(truncate(p.label, 16), 12));
  const size_t fit = std::max<size_t>(1, static_cast<size_t>((f.right - f.left) / (label_w + 14)));
  const size_t every = (n + fit - 1) / fit;
  out += fmt::format("<g class=\"x-axis\"><line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\"/>", co(f.left),
                     co(f.right), co(f.bottom), co(f.bottom), kAxis);
  for (size_t i = 0; i < n; i += std::max<size_t>(every, 1))
    out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/><text class=\"xtick\" "
                       "x=\"{0}\" y=\"{4}\" text-anchor=\"middle\" font-size=\"12\" fill=\"{5}\">{6}</text>",
                       X(static_cast<double>(i)), co(f.bottom), co(f.bottom + 4), kAxis, co(f.bottom + 17), kMuted,
                       escape(truncate(points[i].label, 16)));
  if (!o.x_label.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"{}\">{}</text>",
                       co((f.left + f.right) / 2), co(l.xlabel_y), kMuted, escape(o.x_label));
  out += "</g>";
  if (empty) out += no_data(f);

  // Baseline band and dashed baseline, one path segment per run of known baselines.
  std::string band_d, base_d;
  for (size_t i = 0; i < n;) {
    if (!base(i)) { ++i; continue; }
    size_t j = i;
    while (j < n && base(j)) ++j;
    std::vector<std::pair<double, double>> run;  // (index, baseline); a lone point spans +-0.3
    if (j - i == 1) {
      run = {{i - 0.3, *base(i)}, {i + 0.3, *base(i)}};
    } else {
      for (size_t k = i; k < j; ++k) run.emplace_back(static_cast<double>(k), *base(k));
    }
    for (size_t k = 0; k < run.size(); ++k) {
      band_d += fmt::format("{}{} {}", k == 0 ? "M" : "L", X(run[k].first), co(sy(run[k].second * (1 + band))));
      base_d += fmt::format("{}{} {}", k == 0 ? "M" : "L", X(run[k].first), co(sy(run[k].second)));
    }
    for (size_t k = run.size(); k-- > 0;)
      band_d += fmt::format("L{} {}", X(run[k].first), co(sy(run[k].second * (1 - band))));
    band_d += "Z";
    i = j;
  }
  if (!band_d.empty()) {
    out += fmt::format("<path class=\"band\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.12\" stroke=\"none\"/>", band_d,
                       kBand);
    out += fmt::format("<path class=\"baseline\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.25\" "
                       "stroke-dasharray=\"5 4\"/>", base_d, kMuted);
  }
  for (size_t s : step_changes) {
    if (s >= n) continue;
    const std::string x = X(static_cast<double>(s) - 0.5);
    out += fmt::format("<line class=\"step-change\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/><text x=\"{0}\" y=\"{4}\" dx=\"3\" "
                       "font-size=\"10\" fill=\"{3}\">step</text>", x, co(f.top), co(f.bottom), kStep,
                       co(f.top + 9));
  }
  std::vector<Pt> line;
  for (size_t i = 0; i < n; ++i)
    if (finite(points[i].value) && (!ya.log || points[i].value > 0))
      line.push_back({sx(static_cast<double>(i)), sy(points[i].value)});
  if (line.size() > 1)
    out += fmt::format("<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.75\" "
                       "stroke-linejoin=\"round\"/>", points_attr(line), color);
  for (size_t i = 0, k = 0; i < n; ++i) {
    const auto& p = points[i];
    if (!finite(p.value) || (ya.log && p.value <= 0)) continue;
    const Pt& q = line[k++];
    const std::string tip = "<title>" + escape(p.label) + ": " + fnum(p.value) +
                            (p.flag.empty() || p.flag == "normal" ? std::string() : " (" + escape(p.flag) + ")") +
                            "</title>";
    std::string attrs;
    if (p.flag == "suspicious") attrs = fmt::format("r=\"4.5\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"2\"", kAmber);
    else if (p.flag == "regression") attrs = fmt::format("r=\"5\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1\"", kRed);
    else if (p.flag == "improvement") attrs = fmt::format("r=\"5\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1\"", kGreen);
    else attrs = fmt::format("r=\"2.75\" fill=\"{}\"", color);
    const std::string cls = p.flag == "suspicious" || p.flag == "regression" || p.flag == "improvement" ? p.flag : "normal";
    out += fmt::format("<circle class=\"pt-{}\" cx=\"{}\" cy=\"{}\" {}>{}</circle>", cls, co(q.x), co(q.y), attrs, tip);
  }
  return out + "</svg>";
}

std::string sparkline(const std::vector<double>& values, int width, int height) {
  width = std::clamp(width, 16, 2000);
  height = std::clamp(height, 8, 500);
  const double pad = 2.5;
  double lo = kInf, hi = -kInf, last = 0;
  size_t count = 0;
  for (double v : values)
    if (finite(v)) lo = std::min(lo, v), hi = std::max(hi, v), last = v, ++count;
  const std::string title =
      count == 0 ? std::string("no data")
                 : fmt::format("{} values, min {}, max {}, last {}", count, fnum(lo), fnum(hi), fnum(last));
  std::string out = svg_open(width, height, title, "spark", true);
  if (count == 0) {
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-dasharray=\"2 2\"/>",
                       co(pad), co(width - pad), co(height / 2.0), co(height / 2.0), kGrid);
    return out + "</svg>";
  }
  const double span = values.size() > 1 ? static_cast<double>(values.size() - 1) : 1.0;
  std::vector<Pt> px;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!finite(values[i])) continue;
    const double x = values.size() == 1 ? width / 2.0 : pad + static_cast<double>(i) / span * (width - 2 * pad);
    const double t = hi > lo ? (values[i] - lo) / (hi - lo) : 0.5;
    px.push_back({x, height - pad - t * (height - 2 * pad)});
  }
  if (px.size() > 1)
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.25\" "
                       "stroke-linejoin=\"round\"/>", points_attr(decimate(px)), palette_color(0));
  out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2\" fill=\"{}\"/>", co(px.back().x), co(px.back().y),
                     palette_color(0));
  return out + "</svg>";
}

}  // namespace twinbench::html
