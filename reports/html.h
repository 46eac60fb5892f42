// Self-contained HTML building blocks for twinbench reports: escaping, the page
// shell (one inline stylesheet, a Content-Security-Policy that forbids every
// fetch), tables with right-aligned numbers, verdict badges, links, sections and
// the colour legend. Pure string building: no LibTorch, no SQLite, no scripts.
//
// Convention: parameters named *_html are trusted, already-escaped HTML (built
// with these helpers); every other string is plain text and is escaped here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace twinbench::html {

// &, <, >, " and ' as entities: safe in element content and in quoted attribute values.
std::string escape(std::string_view text);

// A token usable as an element id / fragment (#id): ASCII letters, digits, '-',
// '_' and '.' kept, everything else folded to '-'; never empty ("x" for empty input).
// section() applies it to its id, so link("#" + slug(name), ...) reaches the section.
std::string slug(std::string_view text);

struct Page {
  std::string title;        // plain text: <title> and the <h1> ("twinbench report" when empty)
  std::string subtitle;     // plain text under the title (e.g. "functional vs module · feat/x"); optional
  std::string nav_html;     // trusted HTML for the navigation bar (e.g. "‹ prev | next ›"); optional
  std::string body_html;    // trusted HTML inside <main>
  std::string footer_text;  // plain text (provenance, generator); optional
};

// A complete HTML5 document with one inline <style> and a CSP meta tag
// (default-src 'none'; style-src 'unsafe-inline'; img-src data:) so the page can
// never fetch anything, even if a caller slips. Readable printed and without JS.
std::string render_page(const Page& page);

// <table> with a <thead> of header_cells_html and a <tbody> of rows_html. Cells are
// trusted HTML; a cell built with num(...) gets class "num" on its <td>/<th>
// (right-aligned, tabular figures). Short rows are padded with empty cells.
std::string table(const std::vector<std::string>& header_cells_html,
                  const std::vector<std::vector<std::string>>& rows_html,
                  const std::string& css_class = "");

// Marks an already-escaped cell as numeric: <span class="num">text_html</span>.
std::string num(const std::string& text_html);

// A coloured badge for a verdict ("improved", "regressed", "no change", "inconclusive",
// "changed", "missing", "not comparable", "new failure") or a run status ("completed",
// "skipped", "failed", "diverged", "interrupted", "running"). The text is escaped;
// the CSS class is badge-<slug of the lower-cased text>; unknown strings get a
// neutral badge.
std::string badge(const std::string& verdict);
// The same badge with `tooltip` (plain text, escaped) as its title: the long
// explanation of a verdict, so that the row it sits in stays one line.
std::string badge(const std::string& verdict, const std::string& tooltip);

// Plain text on one line, cut with an ellipsis beyond a width (about 22em, or
// 12em when `narrow`), the whole text in its tooltip: outside strings (branch
// names, skip reasons) that must not widen or wrap a table row.
std::string clipped(const std::string& text, bool narrow = false);
// Plain text shown short with a fuller text as its tooltip (both escaped): a
// timestamp's "11-24 07:06" over its whole ISO form, say.
std::string with_tooltip(const std::string& text, const std::string& tooltip);

// Plain text coloured like the verdict's badge (for a Diff cell, say):
// <span class="v-<slug>">text_html</span>. text_html is trusted HTML.
std::string verdict_text(const std::string& text_html, const std::string& verdict);

// <a href="href">text</a>, both escaped; in href, bytes a URL may not hold (spaces,
// controls, <>"`{}|\^, non-ASCII) are percent-encoded first ('%' is kept). A
// javascript:, vbscript: or data: href becomes "#".
std::string link(const std::string& href, const std::string& text);

// link() whose text is clipped() (its whole text its tooltip): an outside
// name as a link that must not widen its table row.
std::string clipped_link(const std::string& href, const std::string& text, bool narrow = false);

// <section id="slug(id)"><h2>title</h2>body_html</section>; title is plain text.
std::string section(const std::string& id, const std::string& title, const std::string& body_html);

// What the colours mean, MaxView-style: "Diff = B − A. Green = B improved, red = B
// regressed, grey = within noise." plus the amber / dark red badges. a and b name
// the two sides (plain text).
std::string legend(const std::string& a = "A", const std::string& b = "B");

}  // namespace twinbench::html
