// Parsing `[external.NAME]` sections of a case file into ExternalSpecs, with
// errors that name file, line and key like the rest of config.cpp. Only
// config.cpp includes this (it brings toml++ in).
#pragma once

#include <map>
#include <string>

#include <toml++/toml.h>

#include "variants/external_spec.h"

namespace twinbench {

// `table` is the value of the top-level `external` key. Each entry replaces
// (or adds to) `specs`. Throws ConfigError.
void parse_external_sections(const std::string& path, const toml::table& table,
                             std::map<std::string, ExternalSpec>& specs);

}  // namespace twinbench
