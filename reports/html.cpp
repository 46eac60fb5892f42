// The HTML page shell and small builders (see html.h). The stylesheet is the only
// CSS in a report; it uses system fonts only and references nothing external.
#include "reports/html.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace twinbench::html {
namespace {

constexpr const char* kNumOpen = "<span class=\"num\">";

// Colours follow GitHub Primer's accessible palette: green / red / grey for the
// three verdicts that matter most, amber outline for "can't tell", dark red for
// a new failure. Print keeps the colours (print-color-adjust) but drops the nav.
constexpr const char* kStyle = R"CSS(
:root{color-scheme:light;--fg:#1f2328;--muted:#59636e;--line:#d8dee4;--soft:#f6f8fa;--accent:#0969da;
--green:#1a7f37;--green-bg:#dafbe1;--red:#cf222e;--red-bg:#ffebe9;--grey-bg:#eef1f4;
--amber:#8a5a00;--amber-bg:#fff8c5;--amber-line:#d4a72c;--darkred:#82071e;--blue:#0550ae;--blue-bg:#ddf4ff}
*{box-sizing:border-box}
body{margin:0;background:#fff;color:var(--fg);
font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","Liberation Sans",sans-serif}
.page{max-width:1160px;margin:0 auto;padding:20px 28px 36px}
header.top{border-bottom:1px solid var(--line);padding-bottom:12px;margin-bottom:8px}
.brand{font-size:12px;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);margin:0}
h1{font-size:24px;line-height:1.25;margin:2px 0 4px;font-weight:600}
.subtitle{color:var(--muted);margin:0}
nav.cases{margin-top:12px;font-size:13px;display:flex;flex-wrap:wrap;gap:6px;align-items:center}
nav.cases a,nav.cases strong{padding:2px 10px;border:1px solid var(--line);border-radius:6px}
nav.cases strong{background:var(--soft)}
h2{font-size:18px;line-height:1.3;margin:28px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line);font-weight:600}
h3{font-size:15px;margin:20px 0 8px;font-weight:600}
a{color:var(--accent);text-decoration:none}
a:hover{text-decoration:underline}
p{margin:8px 0}
.table-wrap{overflow-x:auto;margin:8px 0 12px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:6px 14px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
thead th{background:var(--soft);font-weight:600;border-bottom:1px solid #c9d1d9;white-space:nowrap}
tbody tr:hover{background:#fafbfc}
tbody th{font-weight:600;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.num{font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 8px;border-radius:999px;font-size:12px;font-weight:600;line-height:20px;
white-space:nowrap;border:1px solid transparent;background:var(--grey-bg);color:var(--muted)}
.badge-improved,.badge-completed{background:var(--green-bg);color:var(--green)}
.badge-regressed,.badge-failed,.badge-diverged{background:var(--red-bg);color:var(--red)}
.badge-no-change,.badge-missing,.badge-not-judged{background:var(--grey-bg);color:var(--muted)}
.badge-changed{background:var(--blue-bg);color:var(--blue)}
.badge-inconclusive,.badge-not-comparable,.badge-skipped,.badge-interrupted{background:var(--amber-bg);
color:var(--amber);border-color:var(--amber-line)}
.badge-inconclusive,.badge-not-comparable{background:#fff}
.badge-new-failure,.badge-test-hooks{background:var(--darkred);color:#fff}
.badge-running{background:var(--blue-bg);color:var(--blue)}
.badge-open{background:var(--red-bg);color:var(--red)}
.badge-acknowledged{background:var(--amber-bg);color:var(--amber);border-color:var(--amber-line)}
.badge-expected,.badge-invalid{background:var(--grey-bg);color:var(--muted)}
.badge-fixed,.badge-recovered{background:var(--green-bg);color:var(--green)}
form p{margin:6px 0}
input,select,button,textarea{font:inherit;font-size:13px}
form.filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:8px 0}
.v-improved,.v-completed{color:var(--green);font-weight:600}
.v-regressed,.v-failed,.v-diverged{color:var(--red);font-weight:600}
.v-new-failure{color:var(--darkred);font-weight:700}
.v-inconclusive,.v-not-comparable,.v-skipped,.v-interrupted{color:var(--amber)}
.v-no-change,.v-missing,.v-not-judged{color:var(--muted)}
.legend{color:var(--muted);font-size:13px;margin:6px 0 14px}
.legend .badge{margin:0 2px}
.muted,.why{color:var(--muted)}
.why{font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:8px 28px;align-items:start}
figure{margin:8px 0 16px}
figcaption{font-size:12px;color:var(--muted)}
svg.chart{display:block;width:100%;height:auto;font-family:inherit}
svg.spark{display:inline-block;vertical-align:middle}
code,pre,kbd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12px}
pre{background:var(--soft);padding:10px 12px;border-radius:6px;overflow-x:auto}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 18px;font-size:13px}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0}
details>summary{cursor:pointer;color:var(--accent)}
table.maxview td,table.summary td,table.index td,table.provenance td{white-space:nowrap}
.clip{display:inline-block;max-width:22em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom}
.clip.narrow{max-width:12em}
table.index th,table.index td{padding:6px 10px}
details.why{margin:0 0 12px;font-size:12px}
details.why dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0 0}
details.why dt{font-weight:600}
details.why dd{margin:0;color:var(--muted);overflow-wrap:anywhere}
.counts{display:flex;flex-wrap:wrap;gap:8px 18px;align-items:center;margin:8px 0 4px;font-size:14px}
.counts strong{font-size:20px;margin-right:4px;font-variant-numeric:tabular-nums}
.callout{border-left:3px solid var(--amber-line);background:var(--amber-bg);padding:6px 12px;border-radius:0 6px 6px 0}
footer{margin-top:36px;padding-top:10px;border-top:1px solid var(--line);color:var(--muted);font-size:12px}
@media print{body{font-size:10.5pt}.page{max-width:none;padding:0}nav.cases{display:none}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
section,figure,table,.table-wrap{break-inside:avoid}tbody tr:hover{background:none}a{color:inherit}
.charts{display:block}}
)CSS";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A cell is numeric when it was built by num(): escaped text can never start with '<'.
std::string cell(const char* tag, const std::string& html) {
  std::string out = "<";
  out += tag;
  if (starts_with(html, kNumOpen)) out += " class=\"num\"";
  out += ">";
  out += html;
  out += "</";
  out += tag;
  out += ">";
  return out;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string slug(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool keep = std::isalnum(u) || c == '-' || c == '_' || c == '.';
    const char ch = keep ? c : '-';
    if (ch == '-' && !out.empty() && out.back() == '-') continue;  // "a  b" -> "a-b"
    out += ch;
  }
  if (out.empty() || out == "-") return "x";
  return out;
}

std::string render_page(const Page& page) {
  std::string out;
  out.reserve(page.body_html.size() + 8192);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" "
         "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n";
  out += "<meta name=\"generator\" content=\"twinbench\">\n";
  const std::string title = page.title.empty() ? std::string("twinbench report") : page.title;
  out += "<title>" + escape(title) + "</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<div class=\"page\">\n<header class=\"top\">\n";
  out += "<p class=\"brand\">twinbench</p>\n";
  out += "<h1>" + escape(title) + "</h1>\n";
  if (!page.subtitle.empty()) out += "<p class=\"subtitle\">" + escape(page.subtitle) + "</p>\n";
  if (!page.nav_html.empty()) out += "<nav class=\"cases\">" + page.nav_html + "</nav>\n";
  out += "</header>\n<main>\n";
  out += page.body_html;
  out += "\n</main>\n";
  if (!page.footer_text.empty()) out += "<footer><p>" + escape(page.footer_text) + "</p></footer>\n";
  out += "</div>\n</body>\n</html>\n";
  return out;
}

std::string table(const std::vector<std::string>& header_cells_html,
                  const std::vector<std::vector<std::string>>& rows_html, const std::string& css_class) {
  size_t cols = header_cells_html.size();
  for (const auto& row : rows_html) cols = std::max(cols, row.size());
  std::string out = "<div class=\"table-wrap\"><table";
  if (!css_class.empty()) out += " class=\"" + escape(css_class) + "\"";
  out += ">\n";
  if (!header_cells_html.empty()) {
    out += "<thead><tr>";
    for (size_t i = 0; i < cols; ++i) {
      std::string th = cell("th", i < header_cells_html.size() ? header_cells_html[i] : std::string());
      th.insert(3, " scope=\"col\"");
      out += th;
    }
    out += "</tr></thead>\n";
  }
  out += "<tbody>\n";
  for (const auto& row : rows_html) {
    out += "<tr>";
    for (size_t i = 0; i < cols; ++i) out += cell("td", i < row.size() ? row[i] : std::string());
    out += "</tr>\n";
  }
  out += "</tbody>\n</table></div>\n";
  return out;
}

std::string num(const std::string& text_html) {
  return text_html.empty() ? std::string() : kNumOpen + text_html + "</span>";  // no empty <span>
}

std::string badge(const std::string& verdict) { return badge(verdict, ""); }

std::string badge(const std::string& verdict, const std::string& tooltip) {
  if (verdict.empty()) return {};
  const std::string key = slug(lower(verdict));
  const std::string title = tooltip.empty() ? "" : " title=\"" + escape(tooltip) + "\"";
  return "<span class=\"badge badge-" + key + "\"" + title + ">" + escape(verdict) + "</span>";
}

std::string clipped(const std::string& text, bool narrow) {
  if (text.empty()) return {};
  return std::string("<span class=\"clip") + (narrow ? " narrow" : "") + "\" title=\"" + escape(text) + "\">" +
         escape(text) + "</span>";
}

std::string with_tooltip(const std::string& text, const std::string& tooltip) {
  return "<span title=\"" + escape(tooltip) + "\">" + escape(text) + "</span>";
}

std::string verdict_text(const std::string& text_html, const std::string& verdict) {
  if (text_html.empty()) return {};
  return "<span class=\"v-" + slug(lower(verdict)) + "\">" + text_html + "</span>";
}

namespace {

// `href` as an attribute value: a javascript:, vbscript: or data: URL becomes
// "#", and bytes a URL may not hold are percent-encoded (see link()).
std::string safe_href(const std::string& href) {
  // URL parsers skip leading spaces/controls and drop tabs and newlines anywhere,
  // so "  java\tscript:" is still javascript: -- normalise the same way first.
  std::string scheme;
  bool colon = false;
  size_t i = 0;
  while (i < href.size() && static_cast<unsigned char>(href[i]) <= 0x20) ++i;
  for (; i < href.size(); ++i) {
    const char c = href[i];
    if (c == '\t' || c == '\n' || c == '\r') continue;
    if (c == ':') { colon = true; break; }
    if (c == '/' || c == '?' || c == '#') break;
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const bool dangerous = colon && (scheme == "javascript" || scheme == "vbscript" || scheme == "data");
  // Percent-encode what may not appear in a URL (spaces, controls, <>"`{}|\^, non-ASCII
  // bytes) as a browser would; '%' is kept so already-encoded hrefs stay as they are.
  std::string url;
  for (const char c : dangerous ? std::string("#") : href) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || std::strchr("<>\"`{}|\\^", c) != nullptr) {
      static const char* const kHex = "0123456789ABCDEF";
      url += '%';
      url += kHex[u >> 4];
      url += kHex[u & 15];
    } else {
      url += c;
    }
  }
  return escape(url);
}

}  // namespace

std::string link(const std::string& href, const std::string& text) {
  return "<a href=\"" + safe_href(href) + "\">" + escape(text) + "</a>";
}

std::string clipped_link(const std::string& href, const std::string& text, bool narrow) {
  return "<a href=\"" + safe_href(href) + "\">" + clipped(text, narrow) + "</a>";
}

std::string section(const std::string& id, const std::string& title, const std::string& body_html) {
  return "<section id=\"" + escape(slug(id)) + "\">\n<h2>" + escape(title) + "</h2>\n" + body_html + "\n</section>\n";
}

std::string legend(const std::string& a, const std::string& b) {
  const std::string ea = escape(a), eb = escape(b);
  return "<p class=\"legend\">Diff = " + eb + " &#8722; " + ea + "; Change = " + eb + "/" + ea +
         " &#8722; 1 with its confidence interval (one value per run; docs/verdicts.md). Green = " + eb +
         " improved, red = " + eb + " regressed (the interval excludes no change and the estimate is beyond the "
         "threshold), grey = no change (the whole interval within the threshold). " + badge("improved") +
         badge("regressed") + badge("no change") + " Amber outline = these runs cannot tell yet: " +
         badge("inconclusive") + badge("not comparable") + " Blue = " + badge("changed") +
         " (a different parameter count: a different model). Dark red = " + badge("new failure") + " (" + eb +
         " fails where " + ea + " ran). " + badge("missing") + " = a value one side lacks.</p>\n";
}

}  // namespace twinbench::html
