// The table of log formats (see formats.h) and choosing one by name.
#include "harness/logs/formats.h"

#include <fmt/format.h>

#include "harness/base/config.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

// The formats, one line each: X(name) registers make_<name>_format(),
// defined in harness/logs/<name>.cpp. Auto-detection tries them in this
// order; the help text lists them in it.
#define TWINBENCH_LOG_FORMATS(X) \
  X(maxtext)                     \
  X(torchtitan)                  \
  X(nanogpt)                     \
  X(jsonl)                       \
  X(pattern)

#define TWINBENCH_DECLARE_LOG_FORMAT(name) LogFormat make_##name##_format();
TWINBENCH_LOG_FORMATS(TWINBENCH_DECLARE_LOG_FORMAT)
#undef TWINBENCH_DECLARE_LOG_FORMAT

const std::vector<LogFormat>& log_formats() {
#define TWINBENCH_LOG_FORMAT_ENTRY(name) make_##name##_format(),
  static const std::vector<LogFormat> table = {TWINBENCH_LOG_FORMATS(TWINBENCH_LOG_FORMAT_ENTRY)};
#undef TWINBENCH_LOG_FORMAT_ENTRY
  return table;
}

std::string format_choices() {
  std::string out;
  for (const LogFormat& f : log_formats())
    out += (out.empty() ? "" : ", ") + f.name + (f.argument.empty() ? "" : ":" + f.argument);
  return out;
}

const LogFormat* find_format(std::string_view choice) {
  const std::string_view name = choice.substr(0, choice.find(':'));
  for (const LogFormat& f : log_formats())
    if (f.name == name) return &f;
  return nullptr;
}

FormatChoice choose_format(const std::string& choice) {
  const LogFormat* f = find_format(choice);
  if (!f) throw FormatError(fmt::format("unknown log format \"{}\" (known: {})", choice, format_choices()));
  const size_t colon = choice.find(':');
  FormatChoice out{f, colon == std::string::npos ? "" : choice.substr(colon + 1)};
  if (f->argument.empty() && colon != std::string::npos)
    throw FormatError(fmt::format("log format \"{}\": {} takes no argument after ':'", choice, f->name));
  if (!f->argument.empty() && out.argument.empty())
    throw FormatError(fmt::format("log format \"{}\": {} needs one: {}:{}", choice, f->name, f->name, f->argument));
  if (f->check) f->check(out.argument);
  return out;
}

LineView view_line(std::string_view raw, std::string& storage) {
  storage = terminal_text(raw);
  return LineView{raw, storage, trim(strip_log_prefix(storage).body)};
}

std::function<bool(const LineView&)> record_lines(const FormatChoice& choice) {
  const LogFormat& f = *choice.format;
  if (f.live_records) return f.live_records(choice.argument);
  const Signature& record = f.record;
  return [&record](const LineView& line) {
    if (record.line && record.line(line)) return true;
    if (!record.tokens) return false;
    // Consecutive whitespace-separated tokens of the line.
    std::string_view previous, rest = line.text;
    while (!rest.empty()) {
      const size_t start = rest.find_first_not_of(" \t");
      if (start == std::string_view::npos) break;
      rest.remove_prefix(start);
      const size_t end = std::min(rest.find_first_of(" \t"), rest.size());
      const std::string_view token = rest.substr(0, end);
      if (record.tokens(previous, token)) return true;
      previous = token;
      rest.remove_prefix(end);
    }
    return false;
  };
}

void check_external_formats(const std::map<std::string, ExternalSpec>& externals) {
  for (const auto& [name, spec] : externals) {
    try {
      choose_format(spec.format);
    } catch (const FormatError& e) {
      throw ConfigError(spec.format_where.empty() ? spec.where : spec.format_where, "external." + name + ".format",
                        e.what());
    }
  }
}

}  // namespace twinbench::logs
