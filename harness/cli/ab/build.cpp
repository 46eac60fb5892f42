// Resolving and probing the builds of `twinbench ab` (see build.h).
#include "harness/cli/ab/build.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness/cli/ab/error.h"
#include "harness/cli/ab/subprocess.h"

namespace twinbench::ab {

namespace fs = std::filesystem;

namespace {

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

AbError bad(const std::string& message) { return AbError(Stop::kBadInput, message); }

}  // namespace

Build resolve_build(const std::string& side, const std::string& option, const std::string& path) {
  if (path.empty()) throw bad(fmt::format("{}: give the path of a twinbench binary or build directory", option));
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  if (!fs::exists(p, ec)) throw bad(fmt::format("{} {}: no such file or directory", option, path));
  Build b{side, path, ""};
  if (fs::is_directory(p, ec)) {
    const std::vector<fs::path> candidates = {p / "harness" / "twinbench", p / "twinbench",
                                              p / "build" / "harness" / "twinbench"};
    for (const auto& c : candidates) {
      if (is_executable_file(c)) {
        b.binary = fs::weakly_canonical(c, ec).string();
        return b;
      }
    }
    throw bad(fmt::format("{} {}: a directory without a twinbench binary (looked for {}, {} and {}); build it first",
                          option, path, candidates[0].string(), candidates[1].string(), candidates[2].string()));
  }
  if (!fs::is_regular_file(p, ec)) throw bad(fmt::format("{} {}: not a regular file", option, path));
  if (::access(p.c_str(), X_OK) != 0) throw bad(fmt::format("{} {}: not executable", option, path));
  b.binary = fs::weakly_canonical(p, ec).string();
  return b;
}

void probe_build(Build& build, const Workload& w, const std::string& scratch_dir) {
  const std::string who = fmt::format("build {} ({})", build.side, build.given);
  const std::string stem = (fs::path(scratch_dir) / ("probe-" + build.side)).string();

  std::vector<std::string> plan = {build.binary, "plan"};
  plan.insert(plan.end(), w.model_args.begin(), w.model_args.end());
  plan.insert(plan.end(), w.overrides.begin(), w.overrides.end());
  plan.push_back("--json");
  const ProcessResult p = run_process(plan, stem + "-plan");
  if (p.exit_code != 0)
    throw bad(fmt::format("{} cannot plan the case (exit {}): {}", who, p.exit_code, error_line(p.err + "\n" + p.out)));
  const auto j = nlohmann::json::parse(p.out, nullptr, false);
  if (!j.is_object()) throw bad(fmt::format("{}: `plan --json` printed no JSON object; is it a twinbench binary?", who));
  if (j.value("fits", true) == false) {
    const double need = j.value("memory_estimate_bytes", 0.0), have = j.value("device_capacity_bytes", 0.0);
    throw bad(fmt::format("{}: the case does not fit this host ({:.1f} GiB estimated, {:.1f} GiB available); "
                          "every round would be skipped",
                          who, need / (1 << 30), have / (1 << 30)));
  }

  const std::vector<std::string> run = {build.binary, "run",     "--preset", "tiny",    "--variant", w.variant,
                                        "--no-db",    "--group", "probe",    "--repeats", "1",        "--json",
                                        "train.steps=3"};
  const ProcessResult r = run_process(run, stem + "-run");
  if (r.exit_code != 0) {
    // A run that failed says why in its JSON; a refused command line on stderr.
    const auto runs = nlohmann::json::parse(r.out, nullptr, false);
    const bool has_reason = runs.is_array() && !runs.empty() && runs[0].is_object() &&
                            runs[0].value("reason", std::string()) != "";
    const std::string why = has_reason ? runs[0]["reason"].get<std::string>() : error_line(r.err);
    if (why.find("--group") != std::string::npos)
      throw bad(fmt::format("{} has no `run --group` option (it predates `twinbench ab`): {}", who, why));
    throw bad(fmt::format("{} cannot run variant '{}' (exit {}): {}", who, w.variant, r.exit_code, why));
  }
  const ProcessResult help = run_process({build.binary, "run", "--help"}, stem + "-help");
  build.lockstep = help.exit_code == 0 && help.out.find("--lockstep-fd") != std::string::npos;
}

}  // namespace twinbench::ab
