// Where the importer suites find their log fixtures (tests/data/ingest).
#pragma once

#include <string>

namespace twinbench::testing {

inline std::string ingest_fixture(const std::string& name) {
  return std::string(TWINBENCH_SOURCE_DIR) + "/tests/data/ingest/" + name;
}

}  // namespace twinbench::testing
