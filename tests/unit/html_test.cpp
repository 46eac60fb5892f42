// Tests of reports/html and reports/svg: escaping, the page shell, table/badge/
// link builders, the four charts (geometry, NaN/empty/constant input), that no
// page or chart can fetch anything, tidy validation and a headless-Chromium
// screenshot of a full sample page (skipped when chromium is not installed).
//
// TWINBENCH_KEEP_SCREENSHOT=1 keeps the rendered sample page and PNG and prints
// their paths (to look at the design).
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/html.h"
#include "reports/svg.h"

namespace twinbench::html {
namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::string kEvil = "feat/<img src=x onerror=alert(1)>";

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

// Every opening tag is closed in order (or self-closed): enough to catch broken SVG.
::testing::AssertionResult well_formed(const std::string& s) {
  std::vector<std::string> stack;
  static const std::regex tag(R"re(<(/?)([A-Za-z][A-Za-z0-9]*)[^<>]*?(/?)>)re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), tag); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    if (m[3].length() > 0) continue;  // <x/>
    if (m[1].length() == 0) {
      stack.push_back(m[2]);
    } else if (stack.empty() || stack.back() != m[2].str()) {
      return ::testing::AssertionFailure() << "unexpected </" << m[2] << "> at " << m.position();
    } else {
      stack.pop_back();
    }
  }
  if (!stack.empty()) return ::testing::AssertionFailure() << "unclosed <" << stack.back() << ">";
  if (s.find("<svg") != 0 || s.rfind("</svg>") != s.size() - 6) return ::testing::AssertionFailure() << "not an <svg>";
  return ::testing::AssertionSuccess();
}

// Nothing that could make a browser fetch or run code: the only absolute URL
// allowed is the SVG namespace name, once per <svg>; every tag's attributes are
// parsed, so text that merely mentions "src=" inside an attribute value is fine.
::testing::AssertionResult no_fetch(const std::string& doc) {
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  if (count(doc, ns) != count(doc, "<svg")) return ::testing::AssertionFailure() << "xmlns count != svg count";
  std::string s = doc;
  for (size_t p; (p = s.find(ns)) != std::string::npos;) s.erase(p, ns.size());
  std::string lower = s;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* bad : {"http://", "https://", "<script", "url(", "@import", "<link", "<img", "<iframe",
                          "<object", "<embed", "<image", "<use", "<video", "<audio", "<source", "@font-face"})
    if (lower.find(bad) != std::string::npos) return ::testing::AssertionFailure() << "contains " << bad;
  static const std::regex tag(R"re(<([a-z][a-z0-9-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*/?>)re");
  static const std::regex attr(R"re(\s+([^\s=/>]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?)re");
  for (auto t = std::sregex_iterator(lower.begin(), lower.end(), tag); t != std::sregex_iterator(); ++t) {
    const std::string attrs = (*t)[2];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr); a != std::sregex_iterator(); ++a) {
      const std::string name = (*a)[1];
      std::string value = (*a)[2];
      if (!value.empty() && (value[0] == '"' || value[0] == '\'')) value = value.substr(1, value.size() - 2);
      if (name == "src" || name == "srcset" || name == "poster" || name == "background" || name.rfind("on", 0) == 0)
        return ::testing::AssertionFailure() << "<" << (*t)[1] << "> has attribute " << name;
      if ((name == "href" || name == "xlink:href" || name == "action") &&
          (value.rfind("//", 0) == 0 || value.find(':') != std::string::npos))
        return ::testing::AssertionFailure() << "<" << (*t)[1] << "> links to " << value;
    }
  }
  return ::testing::AssertionSuccess();
}

bool has_nan_text(const std::string& s) {
  std::string lower = s;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos;
}

// The value of attribute `attr` of the first element that contains `marker`.
double attr_after(const std::string& s, const std::string& marker, const std::string& attr, size_t from = 0) {
  const size_t p = s.find(marker, from);
  if (p == std::string::npos) return kNaN;
  const size_t a = s.find(" " + attr + "=\"", p);
  if (a == std::string::npos) return kNaN;
  return std::stod(s.substr(a + attr.size() + 3));
}

// x of the x-axis tick labelled `label`.
double tick_x(const std::string& svg, const std::string& label) {
  static const std::regex tick(R"re(<text class="xtick" x="([-0-9.]+)"[^>]*>([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    if ((*it)[2] == label) return std::stod((*it)[1]);
  return kNaN;
}

ChartOptions titled(const std::string& title) {
  ChartOptions o;
  o.title = title;
  return o;
}

std::string sh_quote(const std::string& s) { return "'" + s + "'"; }

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "twinbench-html-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

bool have(const std::string& program) { return run("command -v " + program + " >/dev/null 2>&1") == 0; }

// --- sample data -------------------------------------------------------------

std::vector<double> loss_curve(double scale, unsigned seed) {
  std::vector<double> y;
  unsigned s = seed;
  for (int i = 0; i < 100; ++i) {
    s = s * 1664525u + 1013904223u;
    const double noise = ((s >> 8) % 1000) / 1000.0 - 0.5;
    y.push_back(2.0 + 8.4 * std::exp(-i / (18.0 * scale)) + 0.06 * noise);
  }
  return y;
}

std::vector<double> step_times(double mean, unsigned seed, int n) {
  std::vector<double> y;
  unsigned s = seed;
  for (int i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    y.push_back(mean * (1 + 0.04 * (((s >> 10) % 1000) / 1000.0 - 0.5)) + (i % 37 == 5 ? mean * 0.15 : 0));
  }
  return y;
}

std::vector<TrendPoint> nightly(std::vector<std::optional<double>>* baseline) {
  std::vector<TrendPoint> pts;
  for (int d = 0; d < 30; ++d) {
    double v = 0.231 + 0.002 * std::sin(d * 1.7);
    std::string flag = "normal";
    if (d == 12) v = 0.252, flag = "suspicious";
    if (d >= 21) v += 0.021, flag = d >= 22 ? "regression" : "suspicious";
    if (d == 27) v = 0.236, flag = "improvement";
    pts.push_back({fmt::format("04-{:02d}", d + 1), v, flag});
    baseline->push_back(d < 3 ? std::nullopt : std::optional<double>(0.231));
  }
  return pts;
}

std::string sample_page() {
  const std::string a = "functional", b = "module";
  std::vector<std::vector<std::string>> rows = {
      {"Parameters", num("1.104 billion"), num("1.104 billion"), num("0"), badge("no change")},
      {"Final loss", num("2.0312"), num("2.0309"), num(verdict_text("&#8722;0.0003", "no change")), badge("no change")},
      {"TFLOP/s", num("59.222"), num("63.581"), num(verdict_text("+4.359 (+7.4%)", "improved")), badge("improved")},
      {"Tok/s", num("8926.6"), num("9583.7"), num(verdict_text("+657.1 (+7.4%)", "improved")), badge("improved")},
      {"Avg s/step", num("0.2295"), num("0.2138"), num(verdict_text("&#8722;0.0157 (&#8722;6.8%)", "improved")),
       badge("improved")},
      {"Median s/step", num("0.2291"), num("0.2136"), num(verdict_text("&#8722;0.0155", "improved")),
       badge("improved")},
      {"Memory %", num("1.38"), num("1.52"), num(verdict_text("+0.14", "regressed")), badge("regressed")},
      {"MFU", num("&#8212;"), num("&#8212;"), num(""), badge("not comparable")},
      {"LibTorch", "1.13.1", "1.13.1", "", ""}};
  std::string body;
  body += section("metrics", "Metrics: " + a + " vs " + b + " \u00b7 " + kEvil,
                  table({"Metric", num(escape(a) + " <code>f093f37</code>"), num(escape(b) + " <code>f093f37</code>"),
                         num("Diff (" + escape(b) + " &#8722; " + escape(a) + ")"), "Verdict"},
                        rows, "maxview") +
                      legend(a, b));
  std::vector<Series> curves = {{a, {}, loss_curve(1.0, 1), "", false}, {b, {}, loss_curve(1.03, 2), "", true}};
  std::vector<std::optional<double>> base;
  const auto trend = nightly(&base);
  body += section("charts", "Loss curves and step times",
                  line_chart(curves, {"Training loss", "step", "loss", 640, 280, false}) +
                      distribution_chart({{a, step_times(0.2295, 3, 96)}, {b, step_times(0.2138, 4, 96)}},
                                         {"Steady-state step time", "seconds per step", "", 640, 280, false}) +
                      "<p class=\"muted\">96 steady steps each; warm-up and checkpoint steps excluded.</p>");
  body += section("side-by-side", "Side by side",
                  "<div class=\"charts\"><figure>" +
                      line_chart(curves, {"Training loss (log)", "step", "loss", 540, 260, true}) +
                      "</figure><figure>" + line_chart({}, {"Eval loss", "step", "loss", 540, 260, false}) +
                      "<figcaption>No eval steps in this run.</figcaption></figure></div>");
  body += section("trend", "Nightly: 04_int8 / module / Avg s/step",
                  trend_chart(trend, base, 0.03, {21}, {"Avg s/step, last 30 nights", "night", "s/step", 1000, 300}));
  std::vector<std::vector<std::string>> idx;
  for (const char* c : {"01_base", "02_bf16", "03_dropout", "04_int8"}) {
    idx.push_back({link(std::string("pair-") + c + ".html", c), escape(b), badge("completed"),
                   num("0.2138"), sparkline(step_times(0.21, static_cast<unsigned>(c[1]), 20)), badge("improved")});
  }
  idx.push_back({escape("05_fp8"), escape(b), badge("skipped") + " <span class=\"muted\">needs cuda</span>",
                 num("&#8212;"), sparkline({}), badge("not comparable")});
  idx.push_back({escape(kEvil), escape(a), badge("failed"), num("&#8212;"), sparkline({1, kNaN, 2, 2.5}),
                 badge("new failure")});
  body += section("index", "All runs",
                  table({"Case", "Implementation", "Status", num("Avg s/step"), "History", "Verdict"}, idx));
  body += section("provenance", "Provenance",
                  "<dl class=\"kv\"><dt>commit</dt><dd><code>f093f3730</code> (" + escape(kEvil) +
                      ")</dd><dt>device</dt><dd>cpu, 2 threads</dd></dl>");
  Page page{"Pair report: 04_int8", a + " vs " + b + " \u00b7 " + kEvil,
            link("pair-03_dropout.html", "\u2039 03_dropout") + "<strong>04_int8</strong>" +
                link("pair-05_fp8.html", "05_fp8 \u203a") + link("index.html", "index"),
            body, "twinbench " + kEvil + " \u00b7 rendered for tests"};
  return render_page(page);
}

// --- escaping and builders -----------------------------------------------------

TEST(Html, EscapesMarkupQuotesAndAmpersands) {
  EXPECT_EQ(escape(kEvil), "feat/&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(escape("a\"b'c&d"), "a&quot;b&#39;c&amp;d");
  EXPECT_EQ(escape("&amp;"), "&amp;amp;");
  EXPECT_EQ(escape(""), "");
  EXPECT_EQ(escape("plain \xc2\xb5s"), "plain \xc2\xb5s");
}

TEST(Html, PageWithHostileStringsHasNoRawMarkup) {
  Page p{kEvil, kEvil, link(kEvil, kEvil), section(kEvil, kEvil, "<p>" + escape(kEvil) + "</p>") + badge(kEvil) +
                                               table({escape(kEvil)}, {{escape(kEvil)}}, kEvil),
         kEvil};
  const std::string doc = render_page(p);
  EXPECT_EQ(doc.find("<img"), std::string::npos);
  EXPECT_TRUE(no_fetch(doc));  // also: no element got an onerror= attribute
  EXPECT_NE(doc.find("<title>feat/&lt;img src=x onerror=alert(1)&gt;</title>"), std::string::npos);
  EXPECT_EQ(doc.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(doc.find("<html lang=\"en\">"), std::string::npos);
  EXPECT_NE(doc.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(doc.find("name=\"viewport\""), std::string::npos);
  const size_t csp = doc.find(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">");
  ASSERT_NE(csp, std::string::npos);
  EXPECT_LT(csp, doc.find("<style>"));  // in force before anything else is parsed
  EXPECT_EQ(count(doc, "<style>"), 1u);
  EXPECT_TRUE(no_fetch(doc));
}

TEST(Html, TableMarksNumericCellsAndPadsRows) {
  const std::string t = table({"Metric", num("A")}, {{"TFLOP/s", num("59.2")}, {"only one"}}, "maxview");
  EXPECT_NE(t.find("<table class=\"maxview\">"), std::string::npos);
  EXPECT_NE(t.find("<th scope=\"col\" class=\"num\"><span class=\"num\">A</span></th>"), std::string::npos);
  EXPECT_NE(t.find("<td class=\"num\"><span class=\"num\">59.2</span></td>"), std::string::npos);
  EXPECT_NE(t.find("<td>TFLOP/s</td>"), std::string::npos);
  EXPECT_EQ(count(t, "<td"), 4u);  // the short row is padded
  // Escaped text can never pass for a numeric cell.
  EXPECT_EQ(table({}, {{escape("<span class=\"num\">1</span>")}}).find("class=\"num\""), std::string::npos);
}

TEST(Html, BadgesLinksSectionsAndLegend) {
  EXPECT_EQ(badge("too few samples"), "<span class=\"badge badge-too-few-samples\">too few samples</span>");
  EXPECT_NE(badge("Regressed").find("badge-regressed"), std::string::npos);
  const std::string hostile = badge("x\" onmouseover=\"alert(1)");
  EXPECT_EQ(count(hostile, "\""), 2u) << hostile;  // class="..." only; the text's quotes are entities
  EXPECT_EQ(with_tooltip("11-24 07:06", "2026-11-24T07:06:12.345Z\" onmouseover=\"x"),
            "<span title=\"2026-11-24T07:06:12.345Z&quot; onmouseover=&quot;x\">11-24 07:06</span>");
  EXPECT_EQ(link("javascript:alert(1)", "x"), "<a href=\"#\">x</a>");
  EXPECT_EQ(link(" JaVa\tScRiPt:alert(1)", "x"), "<a href=\"#\">x</a>");
  EXPECT_EQ(link("pair-01_base.html?a=1&b=\"2\"", "<b>"),
            "<a href=\"pair-01_base.html?a=1&amp;b=%222%22\">&lt;b&gt;</a>");
  EXPECT_EQ(link("a b/\xc2\xb5.html#x%20y", "\xc2\xb5"), "<a href=\"a%20b/%C2%B5.html#x%20y\">\xc2\xb5</a>");
  EXPECT_EQ(section("01 base/<x>", "T & U", "<p>x</p>"),
            "<section id=\"01-base-x-\">\n<h2>T &amp; U</h2>\n<p>x</p>\n</section>\n");
  EXPECT_EQ(slug(""), "x");
  const std::string l = legend("Linen", "NNX");
  EXPECT_NE(l.find("Diff = NNX &#8722; Linen; Change = NNX/Linen &#8722; 1 with its confidence interval"),
            std::string::npos);
  EXPECT_NE(l.find("Green = NNX improved, red = NNX regressed"), std::string::npos);
  for (const char* v : {"improved", "regressed", "no change", "inconclusive", "changed", "missing", "not comparable",
                        "new failure"})
    EXPECT_NE(l.find(badge(v)), std::string::npos) << v;
  EXPECT_NE(legend().find("Diff = B &#8722; A;"), std::string::npos);
}

TEST(Html, StylesheetHasEveryBadgeAndNoExternalFonts) {
  const std::string doc = render_page({"t", "", "", "", ""});
  for (const char* v : {"improved", "regressed", "no-change", "inconclusive", "changed", "missing", "not-comparable",
                        "new-failure",
                        "completed", "skipped", "failed", "diverged", "interrupted", "running"})
    EXPECT_NE(doc.find(std::string(".badge-") + v), std::string::npos) << v;
  EXPECT_NE(doc.find("td.num"), std::string::npos);
  EXPECT_NE(doc.find("@media print"), std::string::npos);
  EXPECT_EQ(doc.find("@font-face"), std::string::npos);
  EXPECT_TRUE(no_fetch(doc));
}

// --- charts --------------------------------------------------------------------

TEST(Svg, LineChartDrawsOnePolylinePerSeriesInItsColour) {
  const std::string svg = line_chart({{"functional", {0, 1, 2, 3}, {4, 3, 2.5, 2.2}, "#ff0000", false},
                                      {"module <b>", {0, 1, 2, 3}, {4.1, 3.1, 2.4, 2.1}, "#00aa00", true}},
                                     {"loss & more", "step", "loss"});
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  const size_t p1 = svg.find("<polyline"), p2 = svg.find("<polyline", p1 + 1);
  EXPECT_NE(svg.find("stroke=\"#ff0000\"", p1), std::string::npos);
  EXPECT_LT(svg.find("stroke=\"#ff0000\"", p1), p2);
  EXPECT_NE(svg.find("stroke=\"#00aa00\"", p2), std::string::npos);
  EXPECT_EQ(svg.substr(p1, svg.find("/>", p1) - p1).find("dasharray"), std::string::npos);
  EXPECT_NE(svg.substr(p2, svg.find("/>", p2) - p2).find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find("role=\"img\""), std::string::npos);
  EXPECT_NE(svg.find("<title>loss &amp; more</title>"), std::string::npos);
  EXPECT_NE(svg.find("module &lt;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 640 280\""), std::string::npos);
  EXPECT_NE(svg.find("width:100%"), std::string::npos);
  EXPECT_GE(count(svg, "class=\"xtick\""), 3u);
  EXPECT_GE(count(svg, "class=\"ytick\""), 3u);
  EXPECT_TRUE(no_fetch(svg));
}

TEST(Svg, LineChartSurvivesEmptyNanAndConstantInput) {
  for (const auto& s : {line_chart({}, {}), line_chart({{"e", {}, {}, "", false}}, titled("t")),
                        line_chart({{"bad", {}, {kNaN, kInf, -kInf}, "", false}}, titled("t"))}) {
    EXPECT_TRUE(well_formed(s));
    EXPECT_FALSE(has_nan_text(s)) << s;
    EXPECT_NE(s.find("no data"), std::string::npos);
    EXPECT_TRUE(no_fetch(s));
  }
  const std::string holes = line_chart({{"h", {0, 1, 2, 3, 4}, {1, kNaN, 3, kInf, 5}, "", false}}, titled("t"));
  EXPECT_TRUE(well_formed(holes));
  EXPECT_FALSE(has_nan_text(holes));
  const size_t p = holes.find("points=\"");
  ASSERT_NE(p, std::string::npos);
  EXPECT_EQ(count(holes.substr(p, holes.find('"', p + 8) - p), ","), 3u);  // 3 finite points

  const std::string flat = line_chart({{"c", {}, {2, 2, 2, 2}, "", false}}, titled("t"));
  EXPECT_TRUE(well_formed(flat));
  EXPECT_FALSE(has_nan_text(flat));
  const std::regex pt(R"re(([-0-9.]+),([-0-9.]+))re");
  const size_t q = flat.find("points=\"") + 8;
  const std::string pts = flat.substr(q, flat.find('"', q) - q);
  std::vector<std::string> ys;
  for (auto it = std::sregex_iterator(pts.begin(), pts.end(), pt); it != std::sregex_iterator(); ++it)
    ys.push_back((*it)[2]);
  ASSERT_EQ(ys.size(), 4u);
  for (const auto& y : ys) EXPECT_EQ(y, ys[0]);

  const std::string logy = line_chart({{"l", {}, {10, 1, 0.1, 0, -1}, "url(http://x)", false}},
                                      {"log", "", "", 640, 280, true});
  EXPECT_TRUE(well_formed(logy));
  EXPECT_FALSE(has_nan_text(logy));
  EXPECT_TRUE(no_fetch(logy)) << "unsafe colour must be replaced";
  EXPECT_NE(logy.find(">0.1</text>"), std::string::npos);
  EXPECT_NE(logy.find(">10</text>"), std::string::npos);
  EXPECT_TRUE(well_formed(line_chart({{"one", {}, {3}, "", false}}, titled("t"))));
}

TEST(Svg, AxesUseNiceTicks) {
  const std::string svg = line_chart({{"s", {0, 97}, {2.03, 10.41}, "", false}}, titled("t"));
  for (const char* l : {">0</text>", ">20</text>", ">100</text>", ">2</text>", ">12</text>"})
    EXPECT_NE(svg.find(l), std::string::npos) << l;
  EXPECT_EQ(svg.find(">2.03</text>"), std::string::npos);
  const std::string big = line_chart({{"s", {0, 1}, {1.1e9, 1.2e9}, "", false}}, titled("t"));
  EXPECT_NE(big.find(">1.1e9</text>"), std::string::npos) << big;
}

TEST(Svg, DistributionChartPlacesTheMedianOnTheSharedAxis) {
  const std::string svg = distribution_chart({{"functional", {8, 0, 3, 1, 2}}, {"module", {4, 5, kNaN, 6}}},
                                             {"step time", "s", ""});
  EXPECT_TRUE(well_formed(svg));
  EXPECT_FALSE(has_nan_text(svg));
  const double x0 = tick_x(svg, "0"), x8 = tick_x(svg, "8");
  ASSERT_TRUE(std::isfinite(x0) && std::isfinite(x8)) << svg;
  ASSERT_GT(x8, x0);
  const size_t first = svg.find("class=\"median\"");
  EXPECT_NEAR(attr_after(svg, "class=\"median\"", "x1"), x0 + 2.0 / 8.0 * (x8 - x0), 0.15);  // median of 0..3, 8
  EXPECT_NEAR(attr_after(svg, "class=\"median\"", "x1", first + 1), x0 + 5.0 / 8.0 * (x8 - x0), 0.15);
  // Box p25..p75 of {0,1,2,3,8} is 1..3.
  EXPECT_NEAR(attr_after(svg, "class=\"box\"", "x"), x0 + 1.0 / 8.0 * (x8 - x0), 0.15);
  EXPECT_NEAR(attr_after(svg, "class=\"box\"", "width"), 2.0 / 8.0 * (x8 - x0), 0.2);
  EXPECT_EQ(count(svg, "<circle"), 8u);  // a dot per finite sample
  EXPECT_NE(svg.find(">functional</text>"), std::string::npos);
  EXPECT_TRUE(no_fetch(svg));

  const std::string many = distribution_chart({{"a", std::vector<double>(500, 1.0)}, {"b", {}}}, {});
  EXPECT_TRUE(well_formed(many));
  EXPECT_EQ(count(many, "<circle"), 2u);  // >200 samples: only min and max
  EXPECT_NE(many.find("no samples"), std::string::npos);
  EXPECT_TRUE(well_formed(distribution_chart({}, {})));
}

TEST(Svg, TrendChartFlagsPointsAndDrawsTheBand) {
  std::vector<std::optional<double>> base;
  const auto pts = nightly(&base);
  const std::string svg = trend_chart(pts, base, 0.03, {21}, {"trend <x>", "", "s/step"});
  EXPECT_TRUE(well_formed(svg));
  const size_t r = svg.find("class=\"pt-regression\"");
  ASSERT_NE(r, std::string::npos);
  EXPECT_LT(svg.find("fill=\"#cf222e\"", r), svg.find("</circle>", r));
  const size_t s = svg.find("class=\"pt-suspicious\"");
  ASSERT_NE(s, std::string::npos);
  EXPECT_LT(svg.find("fill=\"#fff\"", s), svg.find("</circle>", s));  // hollow
  EXPECT_NE(svg.find("class=\"pt-improvement\""), std::string::npos);
  const size_t b = svg.find("<path class=\"band\" d=\"M");
  ASSERT_NE(b, std::string::npos);
  EXPECT_NE(svg.find("Z\"", b), std::string::npos);
  EXPECT_NE(svg.find("class=\"baseline\""), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"step-change\""), 1u);
  EXPECT_LT(count(svg, "class=\"xtick\""), pts.size());  // thinned
  EXPECT_GE(count(svg, "class=\"xtick\""), 4u);
  EXPECT_NE(svg.find("baseline \u00b13%"), std::string::npos);
  EXPECT_TRUE(no_fetch(svg));
  // Band edges: the baseline 0.231 +- 3% sits inside the drawn y range.
  EXPECT_FALSE(has_nan_text(svg));

  std::vector<TrendPoint> odd = {{"a", kNaN, "regression"}, {"<b>", 1.0, "normal"}, {"c", 1.0, "weird"}};
  const std::string o = trend_chart(odd, {std::nullopt, 1.0}, kNaN, {0, 99}, {});
  EXPECT_TRUE(well_formed(o));
  EXPECT_FALSE(has_nan_text(o));
  EXPECT_NE(o.find("&lt;b&gt;"), std::string::npos);
  EXPECT_TRUE(well_formed(trend_chart({}, {}, 0.05, {}, {})));
}

TEST(Svg, SparklineHandlesEmptyNanAndConstant) {
  const std::string s = sparkline({3, 2, kNaN, 4, 1});
  EXPECT_TRUE(well_formed(s));
  EXPECT_NE(s.find("width=\"120\" height=\"24\""), std::string::npos);
  EXPECT_NE(s.find("4 values, min 1, max 4, last 1"), std::string::npos);
  for (const auto& t : {sparkline({}), sparkline({kNaN}), sparkline({5, 5, 5}), sparkline({7}, 0, 0)}) {
    EXPECT_TRUE(well_formed(t));
    EXPECT_FALSE(has_nan_text(t)) << t;
    EXPECT_TRUE(no_fetch(t));
  }
}

// --- whole page: tidy, no fetch, Chromium --------------------------------------

TEST(Page, SamplePageCannotFetchAnything) {
  const std::string doc = sample_page();
  EXPECT_TRUE(no_fetch(doc));
  EXPECT_EQ(doc.find("<img"), std::string::npos);
  EXPECT_EQ(count(doc, "<svg"), 5u + 6u);  // 5 charts, 6 sparklines
}

// tidy's exit status (0 clean, 1 warnings, 2 errors) and its report for `doc`.
std::pair<int, std::string> tidy(const std::string& doc) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "page.html") << doc;
  const int rc = run("tidy -q -e " + sh_quote((dir / "page.html").string()) + " > " +
                     sh_quote((dir / "tidy.txt").string()) + " 2>&1");
  std::string report = slurp(dir / "tidy.txt");
  fs::remove_all(dir);
  return {rc, report};
}

TEST(Page, SamplePageValidatesWithTidy) {
  ASSERT_TRUE(have("tidy")) << "tidy not installed (run ci/setup.sh)";
  const auto [rc, report] = tidy(sample_page());
  EXPECT_TRUE(rc == 0 || rc == 1) << "tidy exit " << rc << "\n" << report;  // 2 = errors
  EXPECT_EQ(report.find("Error:"), std::string::npos) << report;
  EXPECT_EQ(rc, 0) << "tidy warnings:\n" << report;  // currently clean: keep it so
}

TEST(Page, HostilePageValidatesWithTidy) {
  ASSERT_TRUE(have("tidy")) << "tidy not installed (run ci/setup.sh)";
  ChartOptions o;
  o.title = o.x_label = o.y_label = kEvil;
  const std::string body =
      section(kEvil, kEvil,
              table({escape(kEvil), num(escape(kEvil))}, {{badge(kEvil), num("")}, {link(kEvil, kEvil)}}, kEvil) +
                  legend(kEvil, kEvil)) +
      line_chart({{kEvil, {}, {1, 2}, kEvil, true}}, o) + trend_chart({{kEvil, 1, kEvil}}, {1.0}, 0.1, {0}, o) +
      distribution_chart({{kEvil, {1}}}, o) + sparkline({1, 2});
  for (const std::string& title : {kEvil, std::string()}) {
    const auto [rc, report] = tidy(render_page({title, kEvil, link(kEvil, kEvil), body, kEvil}));
    EXPECT_EQ(rc, 0) << report;
  }
}

TEST(Page, TidyCatchesBrokenMarkup) {  // the validation above can fail
  ASSERT_TRUE(have("tidy")) << "tidy not installed (run ci/setup.sh)";
  const fs::path dir = temp_dir();
  std::ofstream(dir / "bad.html") << render_page({"t", "", "", "<table><tr><td>x</div></p", ""});
  const int rc = run("tidy -q -e " + sh_quote((dir / "bad.html").string()) + " > /dev/null 2>&1");
  fs::remove_all(dir);
  EXPECT_NE(rc, 0);
}

// Renders `doc` to dir/name.png in headless Chromium with console logging on;
// returns Chromium's log (CSP violations and failed loads are logged there).
std::string chromium_render(const fs::path& dir, const std::string& name, const std::string& doc) {
  std::ofstream(dir / (name + ".html")) << doc;
  const std::string cmd = fmt::format(
      "timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--no-first-run --disable-component-update --disable-sync --hide-scrollbars --enable-logging=stderr --v=0 "
      "--user-data-dir={} --window-size=1200,1600 --screenshot={} {} > {} 2>&1",
      sh_quote((dir / ("profile-" + name)).string()), sh_quote((dir / (name + ".png")).string()),
      sh_quote("file://" + (dir / (name + ".html")).string()), sh_quote((dir / (name + ".log")).string()));
  const int rc = run(cmd);
  return fmt::format("exit {}\n", rc) + slurp(dir / (name + ".log"));
}

// A log line that reports `what` blocked by the Content Security Policy (the
// wording differs between Chromium versions: "Refused to load" / "Loading ... violates").
bool csp_blocked(const std::string& log, const std::string& what) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find(what) != std::string::npos && line.find("Content Security Policy") != std::string::npos) return true;
  return false;
}

TEST(Page, RendersInHeadlessChromium) {
  ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "chromium not installed (run ci/setup.sh)";
  const fs::path dir = temp_dir();
  const std::string log = chromium_render(dir, "x", sample_page());
  const fs::path png = dir / "x.png";
  ASSERT_TRUE(fs::exists(png)) << log;
  EXPECT_GT(fs::file_size(png), 10u * 1024u);
  EXPECT_EQ(slurp(png).substr(1, 3), "PNG");
  // Nothing on the page tried to load anything (the CSP would have logged it).
  EXPECT_EQ(log.find("Content Security Policy"), std::string::npos) << log;
  EXPECT_EQ(log.find("Failed to load resource"), std::string::npos) << log;
  if (std::getenv("TWINBENCH_KEEP_SCREENSHOT")) {
    std::cout << "sample page: " << (dir / "x.html").string() << "\nscreenshot: " << png.string() << "\n";
  } else {
    fs::remove_all(dir);
  }
}

TEST(Page, ChromiumBlocksAFetchSmuggledIntoTrustedHtml) {  // the CSP is really in force
  ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "chromium not installed (run ci/setup.sh)";
  const fs::path dir = temp_dir();
  const std::string mistake = "<p>x</p><img src=\"http://127.0.0.1:9/pixel.png\" alt=\"\">"
                              "<div style=\"background:url(http://127.0.0.1:9/bg.png)\">y</div>";
  const std::string log = chromium_render(dir, "leak", render_page({"leak", "", "", mistake, ""}));
  fs::remove_all(dir);
  EXPECT_TRUE(csp_blocked(log, "pixel.png")) << log;
  EXPECT_TRUE(csp_blocked(log, "bg.png")) << log;
}

}  // namespace
}  // namespace twinbench::html
