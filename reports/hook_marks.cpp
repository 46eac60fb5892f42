// Marks of runs made with test hooks (see hook_marks.h).
#include "reports/hook_marks.h"

#include "reports/html.h"

namespace twinbench::reports {

namespace {

constexpr const char* kWhat = "planted causes: not a real measurement, never a baseline";

std::string listed(const std::vector<HookedSide>& sides) {
  std::string out;
  for (const auto& s : sides)
    if (!s.hooks.empty()) out += (out.empty() ? "" : "; ") + (s.label.empty() ? "" : s.label + ": ") + s.hooks;
  return out;
}

}  // namespace

std::vector<HookedSide> hooked_sides(const compare::Comparison& c) {
  return {{c.label_a, c.test_hooks_a}, {c.label_b, c.test_hooks_b}};
}

std::string hooks_text(const std::vector<HookedSide>& sides) {
  const std::string list = listed(sides);
  return list.empty() ? "" : "made with test hooks: " + list + " (" + kWhat + ")";
}

std::string hooks_markdown(const std::vector<HookedSide>& sides) {
  const std::string list = listed(sides);
  return list.empty() ? "" : "> **⚠ test hooks**: " + list + " (" + kWhat + ")\n\n";
}

std::string hooks_html(const std::vector<HookedSide>& sides) {
  const std::string list = listed(sides);
  if (list.empty()) return "";
  return "<p class=\"hooked\">" + html::badge("test hooks", kWhat) + " made with test hooks: " + html::escape(list) +
         " <span class=\"muted\">(" + html::escape(kWhat) + ")</span></p>\n";
}

std::string hooks_flag(const std::string& hooks) { return hooks.empty() ? "" : " [test hooks]"; }

std::string hooks_flag_html(const std::string& hooks) {
  return hooks.empty() ? "" : " " + html::badge("test hooks", hooks + " (" + kWhat + ")");
}

std::string hooks_of(const compare::Comparison& c) { return listed(hooked_sides(c)); }

}  // namespace twinbench::reports
