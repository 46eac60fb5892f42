// The ranked contribution bar chart (svg.h, bar_chart): the "why" section of
// the reports draws what each op adds to a change in step time, with its
// interval, one row per op in rank order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/html.h"
#include "reports/svg.h"
#include "reports/svg_axes.h"

namespace twinbench::html {

using namespace svg_detail;  // NOLINT: this file's own helpers

std::string bar_chart(const std::vector<Bar>& bars, const ChartOptions& in) {
  constexpr double kPadding = 10, kRow = 24, kBarHeight = 14;
  ChartOptions o = in;
  o.width = std::clamp(o.width, 240, 4000);
  double lo = 0, hi = 0;
  for (const auto& b : bars) {
    for (const auto& v : {std::optional<double>(b.value), b.low, b.high})
      if (v && finite(*v)) lo = std::min(lo, *v), hi = std::max(hi, *v);
  }
  const Axis xa = nice_axis(lo, hi > lo ? hi : lo + 1, false);
  double label_w = 0, note_w = 0;
  for (const auto& b : bars) {
    label_w = std::max(label_w, text_width(truncate(b.label, 44), 12));
    note_w = std::max(note_w, text_width(b.note, 12));
  }
  label_w = std::min(label_w + 12, o.width * 0.42);
  note_w = note_w > 0 ? note_w + 12 : 0;
  const double top = kPadding + (o.title.empty() ? 0 : 24) + 6;
  const size_t rows = std::max<size_t>(bars.size(), 1);
  const Frame f{kPadding + label_w, top, o.width - kPadding - note_w, top + static_cast<double>(rows) * kRow};
  o.height = static_cast<int>(f.bottom + 22 + (o.x_label.empty() ? 0 : 20) + kPadding);
  const Scale sx{xa.lo, xa.hi, f.left, f.right, false};

  std::string out = svg_open(o.width, o.height, o.title.empty() ? "bar chart" : o.title, "chart bar-chart");
  out += draw_title(o.title, kPadding, kPadding + 12);
  out += draw_x_axis(xa, sx, f, o.x_label, f.bottom + 38);
  if (bars.empty())
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"{}\">no data</text>",
                       co((f.left + f.right) / 2), co((f.top + f.bottom) / 2), kMuted);
  const double zero = sx(0);
  out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1\"/>", co(zero),
                     co(f.top), co(f.bottom), kInk);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double cy = f.top + static_cast<double>(i) * kRow + kRow / 2;
    out += fmt::format("<g class=\"bar\"><title>{}</title>", escape(b.label + (b.note.empty() ? "" : ": " + b.note)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" font-size=\"12\" fill=\"{}\">{}</text>", co(kPadding),
                       co(cy), kInk, escape(truncate(b.label, 44)));
    if (finite(b.value)) {
      const double x = sx(b.value);
      const std::string color = b.value >= 0 ? kRed : kGreen;
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\" "
                         "stroke=\"{}\"/>",
                         co(std::min(x, zero)), co(cy - kBarHeight / 2), co(std::max(0.5, std::abs(x - zero))),
                         co(kBarHeight), color, b.highlight ? "0.85" : "0.15", color);
    }
    if (b.low && b.high && finite(*b.low) && finite(*b.high)) {
      const double x0 = sx(*b.low), x1 = sx(*b.high);
      out += fmt::format("<line class=\"ci\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" "
                         "stroke-width=\"1.5\"/><line x1=\"{0}\" x2=\"{0}\" y1=\"{4}\" y2=\"{5}\" stroke=\"{3}\"/>"
                         "<line x1=\"{1}\" x2=\"{1}\" y1=\"{4}\" y2=\"{5}\" stroke=\"{3}\"/>",
                         co(x0), co(x1), co(cy), kInk, co(cy - 4), co(cy + 4));
    }
    if (!b.note.empty())
      out += fmt::format("<text x=\"{}\" y=\"{}\" dy=\"0.32em\" font-size=\"12\" fill=\"{}\">{}</text>",
                         co(f.right + 8), co(cy), kMuted, escape(b.note));
    out += "</g>";
  }
  return out + "</svg>";
}

}  // namespace twinbench::html
