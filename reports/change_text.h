// A relative change as every report and message writes it: "+10.2%", with
// its interval when there is one, "+10.2% [+7.1%, +13.4%]" — the nightly
// report, an alert's lines and its notification, triage's issue text.
#pragma once

#include <string>

namespace twinbench::reports {

// `change`, `low` and `high` as fractions (0.102); a bound that is not finite
// leaves the interval out.
std::string change_text(double change, double low, double high);

}  // namespace twinbench::reports
