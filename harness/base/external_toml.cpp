// `[external.NAME]` sections (see external_toml.h).
#include "harness/base/external_toml.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "harness/base/config.h"

namespace twinbench {

namespace {

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// "{source_dir}" (twinbench's source tree, where the built-in trainers live) and
// "{case_dir}" (the case file's folder), so case files need no absolute paths.
std::string expand(std::string text, const std::string& case_dir) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{source_dir}", source_dir()},
                                   std::pair<std::string, std::string>{"{case_dir}", case_dir}})
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

}  // namespace

void parse_external_sections(const std::string& path, const toml::table& table,
                             std::map<std::string, ExternalSpec>& specs) {
  namespace fs = std::filesystem;
  const std::string case_dir = fs::absolute(fs::path(path)).parent_path().string();
  auto where = [&](const toml::node& n) { return fmt::format("{}:{}", path, n.source().begin.line); };
  for (auto&& [k, node] : table) {
    const std::string name(k.str());
    const std::string section = "external." + name;
    const auto* body = node.as_table();
    if (!body) throw ConfigError(where(node), section, "expected a [external.NAME] section");
    if (!valid_name(name))
      throw ConfigError(where(node), section, "a variant name is letters, digits, '_' and '-' only");
    ExternalSpec spec;
    if (const auto it = specs.find(name); it != specs.end()) spec = it->second;  // a case may adjust a built-in one
    spec.name = name;
    spec.where = where(node);
    for (auto&& [kk, v] : *body) {
      const std::string key(kk.str());
      const std::string full = section + "." + key;
      const auto fail = [&](const std::string& what) { throw ConfigError(where(v), full, what); };
      if (key == "command") {
        const auto* arr = v.as_array();
        if (!arr || arr->empty()) fail("expected a non-empty array of strings (argv; never run through a shell)");
        spec.command.clear();
        spec.missing_hint.clear();  // a built-in's install hint does not fit another command
        for (auto&& item : *arr) {
          const auto s = item.value_exact<std::string>();
          if (!s || s->empty()) fail("every element must be a non-empty string");
          spec.command.push_back(expand(*s, case_dir));
        }
      } else if (key == "cwd") {
        const auto s = v.value_exact<std::string>();
        if (!s) fail("expected a string");
        spec.cwd = expand(*s, case_dir);
        if (fs::path(spec.cwd).is_relative()) spec.cwd = (fs::path(case_dir) / spec.cwd).lexically_normal().string();
      } else if (key == "env") {
        const auto* env = v.as_table();
        if (!env) fail("expected a table of NAME = \"value\"");
        spec.env.clear();
        for (auto&& [ek, ev] : *env) {
          const auto s = ev.value_exact<std::string>();
          if (!s) throw ConfigError(where(ev), full + "." + std::string(ek.str()), "expected a string");
          spec.env.emplace_back(std::string(ek.str()), *s);
        }
      } else if (key == "format") {
        // Which formats exist is the log format table's (harness/logs/formats.h, a layer
        // above): logs::check_external_formats checks the name once the case is loaded.
        const auto s = v.value_exact<std::string>();
        if (!s || s->empty()) fail("expected a log format name (docs/external.md)");
        spec.format = *s;
        spec.format_where = where(v);
      } else if (key == "timeout_s") {
        const auto d = v.value<double>();
        if (!d || !(*d > 0 && *d <= 1e7)) fail("expected a number of seconds in (0, 1e7]");
        spec.timeout_s = *d;
      } else if (key == "params") {
        const auto i = v.value_exact<int64_t>();
        if (!i || *i < 0) fail("expected an integer >= 0 (0 = unchecked)");
        spec.params = *i;
      } else if (key == "same_model") {
        const auto b = v.value_exact<bool>();
        if (!b) fail("expected true or false");
        spec.same_model = *b;
      } else if (key == "max_output_bytes") {
        const auto i = v.value_exact<int64_t>();
        if (!i || *i <= 0) fail("expected a positive integer");
        spec.max_output_bytes = *i;
      } else {
        fail("unknown key (known: command, cwd, env, format, timeout_s, params, same_model, max_output_bytes)");
      }
    }
    if (spec.command.empty()) throw ConfigError(where(node), section + ".command", "is required");
    specs[name] = spec;
  }
}

}  // namespace twinbench
