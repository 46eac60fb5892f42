// Progress of a long run on stderr: one updating line when stderr is a terminal,
// plain periodic lines otherwise (CI logs).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "harness/base/records.h"

namespace twinbench {

class Progress {
 public:
  Progress(std::string label, int64_t total_steps);
  void step(const StepRecord& record);
  void finish(const std::string& status);

 private:
  std::string label_;
  int64_t total_;
  bool tty_;
  double seconds_ = 0;
  int64_t done_ = 0;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace twinbench
