// The external executor: runs a trainer command as a variant (docs/external.md).
// It writes the case for the child (external_inputs.h), starts it without a
// shell, reads its stdout live (harness/logs/live_log.h: steps stored in batches and
// the progress line as for native runs), and ends the run like a native one:
// completed, failed (exit code and the end of stderr; timeout; flooding;
// nothing parseable; a wrong parameter count), diverged, interrupted (the
// stop signal is forwarded and the child reaped) or skipped (the trainer said
// it cannot run the case).
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/base/interrupt.h"
#include "harness/base/spawn.h"
#include "harness/base/temp_dir.h"
#include "harness/logs/live_log.h"
#include "harness/logs/parse.h"
#include "harness/logs/sha256.h"
#include "harness/metrics/catalogue.h"
#include "harness/run/exec/executor.h"
#include "harness/run/exec/external_inputs.h"
#include "harness/run/plan/plan.h"
#include "harness/run/exec/progress.h"

namespace twinbench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kStderrTailLines = 8;
constexpr size_t kStderrTailBytes = 2000;
constexpr size_t kMaxLineBytes = size_t{1} << 20;  // longer lines are cut (the importers skip them)
constexpr double kGraceSeconds = 10;               // after a forwarded stop, before SIGKILL

// Runs a short command in `dir` and returns its first stdout line ("" on any failure).
std::string first_line_of(const std::vector<std::string>& argv, const std::string& dir) {
  try {
    const TempDir tmp("twinbench-git");
    SpawnOptions o;
    o.argv = argv;
    o.working_dir = dir;
    o.stdout_path = tmp.file("out");
    o.stderr_path = "/dev/null";
    int status = 0;
    if (waitpid(spawn(o), &status, 0) < 0 || exit_status_of(status).exit_code != 0) return "";
    std::string line;
    std::ifstream in(tmp.file("out"));
    std::getline(in, line);
    return line;
  } catch (const std::exception&) {
    return "";
  }
}

// The script a command runs: its first argument naming a file (python3
// train.py), else the executable itself when it is a path.
std::string script_of(const ExternalSpec& spec) {
  const fs::path base = spec.cwd.empty() ? fs::current_path() : fs::path(spec.cwd);
  for (size_t i = 1; i < spec.command.size(); ++i) {
    const fs::path p = fs::path(spec.command[i]).is_absolute() ? fs::path(spec.command[i]) : base / spec.command[i];
    if (spec.command[i][0] != '-' && fs::is_regular_file(p)) return p.string();
  }
  const fs::path exe = spec.command[0];
  if (exe.has_parent_path()) {
    const fs::path p = exe.is_absolute() ? exe : base / exe;
    if (fs::is_regular_file(p)) return p.string();
  }
  return "";
}

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  logs::Sha256 hash;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) hash.update(buf, static_cast<size_t>(in.gcount()));
  return hash.hex_digest();
}

// Provenance of an external run: the command, its working directory's git
// state and the content hash of the script it ran, merged into the record's.
std::string external_provenance(const std::string& base_json, const ExternalSpec& spec) {
  auto j = nlohmann::json::parse(base_json, nullptr, false);
  if (!j.is_object()) j = nlohmann::json::object();
  const std::string dir = spec.cwd.empty() ? fs::current_path().string() : spec.cwd;
  j["external_command"] = spec.command;
  j["external_cwd"] = dir;
  j["external_format"] = spec.format;
  j["external_defined_at"] = spec.where;
  const std::string script = script_of(spec);
  if (!script.empty()) {
    j["external_script"] = script;
    j["external_script_sha256"] = file_sha256(script);
  }
  const std::string git_dir = script.empty() ? dir : fs::path(script).parent_path().string();
  if (const auto commit = first_line_of({"git", "rev-parse", "HEAD"}, git_dir); !commit.empty()) {
    j["external_git_commit"] = commit;
    j["external_git_dirty"] = !first_line_of({"git", "status", "--porcelain", "--untracked-files=no"}, git_dir).empty();
  }
  return j.dump();
}

std::string stderr_tail(const std::string& path) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    lines.push_back(line.size() > 400 ? line.substr(0, 400) + "..." : line);
    if (lines.size() > kStderrTailLines) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : " | ") + l;
  if (out.size() > kStderrTailBytes) out = "..." + out.substr(out.size() - kStderrTailBytes);
  return out;
}

// `{"twinbench_skip": "reason"}`: the trainer cannot run this case.
std::optional<std::string> trainer_skip_reason(const std::string& text) {
  if (text.find("twinbench_skip") == std::string::npos) return std::nullopt;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("twinbench_skip") || !j["twinbench_skip"].is_string()) return std::nullopt;
  return j["twinbench_skip"].get<std::string>();
}

StepRecord step_record(const logs::ParsedStep& p, const RunConfig& c) {
  StepRecord r;
  r.step = p.step;
  r.loss = p.loss.value_or(std::nan(""));
  r.seconds = p.seconds.value_or(std::nan(""));  // no time: left out of the step-time statistics
  r.tokens = p.tokens ? static_cast<int64_t>(*p.tokens) : c.train.batch * c.train.seq_len * c.train.grad_accum;
  r.warmup = p.is_warmup.value_or(p.step < std::max<int64_t>(1, c.measure.warmup_steps));
  r.eval = p.is_eval.value_or(p.eval_loss.has_value());
  r.checkpoint = p.is_checkpoint.value_or(false);
  r.stall = p.is_stall.value_or(false);
  r.eval_loss = p.eval_loss;
  return r;
}

// The child and what became of it.
struct ChildRun {
  RunStatus status = RunStatus::running;  // running = ended by itself; see exit
  std::string reason;
  ExitStatus exit;
  int64_t peak_rss_bytes = 0;
  std::vector<StepRecord> steps;
  std::optional<double> peak_memory;
  bool exited = false;
};

class ExternalExecutor : public Executor {
 public:
  RunOutcome execute(const RunRequest& request, const RunnerOptions& o) const override;

 private:
  static void supervise(pid_t pid, int fd, const ExternalSpec& spec, const RunConfig& config,
                        const std::string& capture_path, StepWriter& writer, Progress* progress, ChildRun& run);
};

void ExternalExecutor::supervise(pid_t pid, int fd, const ExternalSpec& spec, const RunConfig& config,
                                 const std::string& capture_path, StepWriter& writer, Progress* progress,
                                 ChildRun& run) {
  std::ofstream capture(capture_path, std::ios::binary);
  // What the final parse reads: the lines the format captures (jsonl only
  // the lines that look like JSON objects, so that a trainer's chatter on
  // stdout is ignored as docs/external.md promises; the text formats skip
  // such lines themselves).
  std::ofstream records(capture_path + ".records", std::ios::binary);
  logs::LiveLog live(spec.format);
  const auto start = Clock::now();
  std::optional<Clock::time_point> kill_at;  // after asking the child to stop
  int64_t bytes = 0;
  auto last_flush = start;
  std::string pending;
  bool open = true;
  const auto stop_child = [&](RunStatus status, const std::string& reason, int sig) {
    if (run.status == RunStatus::running) {
      run.status = status;
      run.reason = reason;
    }
    if (!kill_at) {
      kill(-pid, sig);
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kGraceSeconds));
    }
  };
  const auto handle = [&](const std::string& line) {
    if (live.captured(line)) records << line << '\n';
    if (run.status != RunStatus::running) return;
    if (const auto skip = trainer_skip_reason(line)) return stop_child(RunStatus::skipped, *skip, SIGTERM);
    const auto parsed = live.line(line);
    if (!parsed) return;
    const StepRecord r = step_record(*parsed, config);
    if (parsed->memory_bytes) run.peak_memory = std::max(run.peak_memory.value_or(0), *parsed->memory_bytes);
    run.steps.push_back(r);
    writer.add(r);
    if (progress) progress->step(r);
    if (!std::isfinite(r.loss))
      stop_child(RunStatus::diverged, fmt::format("loss is {} at step {}", r.loss, r.step), SIGTERM);
  };
  char buf[1 << 16];
  while (open) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready > 0) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        open = false;
      } else {
        bytes += n;
        if (bytes > spec.max_output_bytes) {
          stop_child(RunStatus::failed,
                     fmt::format("flooded stdout: more than {} bytes (external.{}.max_output_bytes)",
                                 spec.max_output_bytes, spec.name),
                     SIGKILL);
        } else {
          capture.write(buf, n);
          pending.append(buf, static_cast<size_t>(n));
          for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
            handle(pending.substr(0, nl));
            pending.erase(0, nl + 1);
          }
          if (pending.size() > kMaxLineBytes) pending.clear();  // an endless line: dropped
        }
      }
    }
    const auto now = Clock::now();
    // Steps reach the store in batches (StepWriter), and at least every few
    // seconds, so that a slow trainer's run is visible while it runs.
    if (now - last_flush > std::chrono::seconds(2)) {
      writer.flush();
      last_flush = now;
    }
    if (stop_requested() && run.status == RunStatus::running) {
      const int sig = stop_signal() > 0 ? stop_signal() : SIGINT;
      stop_child(RunStatus::interrupted,
                 fmt::format("stopped by signal {} after {} step(s); forwarded to the trainer", sig, run.steps.size()),
                 sig);
    }
    if (std::chrono::duration<double>(now - start).count() > spec.timeout_s)
      stop_child(RunStatus::failed,
                 fmt::format("timed out after {} s (external.{}.timeout_s) at step {}", spec.timeout_s, spec.name,
                             run.steps.empty() ? std::string("none") : std::to_string(run.steps.back().step)),
                 SIGTERM);
    if (kill_at && now > *kill_at) {
      kill(-pid, SIGKILL);
      kill_at = now + std::chrono::hours(24);
    }
  }
  if (!pending.empty()) handle(pending);  // a last line without a newline
  records.flush();
  writer.flush();
  // stdout is closed; the child is ending (or a grandchild holds the pipe no longer).
  int status = 0;
  rusage usage{};
  while (true) {
    const pid_t got = wait4(pid, &status, WNOHANG, &usage);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) break;
    const auto now = Clock::now();
    if (run.status == RunStatus::running && stop_requested())
      stop_child(RunStatus::interrupted, "stopped by signal; forwarded to the trainer", stop_signal());
    if (std::chrono::duration<double>(now - start).count() > spec.timeout_s)
      stop_child(RunStatus::failed, fmt::format("timed out after {} s (external.{}.timeout_s)", spec.timeout_s,
                                                spec.name),
                 SIGTERM);
    if (kill_at && now > *kill_at) {
      kill(-pid, SIGKILL);
      kill_at = now + std::chrono::hours(24);
    }
    usleep(20000);
  }
  kill(-pid, SIGKILL);  // whatever the trainer left behind in its group
  run.exit = exit_status_of(status);
  run.exited = true;
  run.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

RunOutcome ExternalExecutor::execute(const RunRequest& request, const RunnerOptions& o) const {
  const RunConfig& config = request.config;
  RunOutcome out = request.outcome;
  const ExternalSpec& spec = config.externals.at(out.variant);
  const std::string who = fmt::format("external variant '{}'", spec.name);
  store::RunRecord record = request.record;
  record.provenance_json = external_provenance(record.provenance_json, spec);
  if (o.store) out.run_id = o.store->begin_run(record);
  // The store itself may fail (disk full, locked): then the cause is kept
  // beside it and stored at its next open (store/causes.h), as for native runs.
  const auto finish = [&](RunStatus status, const std::string& reason, const store::MetricList& metrics) {
    out.status = status;
    out.reason = reason;
    if (!o.store) return;
    try {
      o.store->finish_run(out.run_id, status, reason, metrics);
    } catch (const std::exception&) {
      if (!o.store->finish_run_or_keep_cause(out.run_id, status, reason))
        std::cerr << fmt::format("twinbench: run {} could not be finished in {}: {}\n", out.run_id,
                                 o.store->path(), reason);
    }
  };
  const std::string label = fmt::format("{} / {}{}", out.case_name, out.variant,
                                        out.repeat > 0 ? fmt::format(" #{}", out.repeat) : "");
  std::optional<TempDir> dir;
  ChildRun run;
  pid_t pid = -1;
  int read_fd = -1;
  StepWriter writer(o.store, out.run_id);
  std::optional<Progress> progress;
  if (o.progress) progress.emplace(label, config.train.steps);
  try {
    dir.emplace("twinbench-" + spec.name);
    const ExternalInputs inputs =
        write_external_inputs(config, spec, dir->path().string(), out.run_id, out.repeat, request.threads, o.device);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("pipe(): {}", std::strerror(errno)));
    SpawnOptions so;
    so.argv = spec.command;
    so.env = inputs.env;
    so.env.insert(so.env.end(), spec.env.begin(), spec.env.end());
    so.working_dir = spec.cwd;
    so.stdout_fd = fds[1];
    so.stderr_path = dir->file("stderr.txt");
    so.new_process_group = true;
    try {
      pid = spawn(so);
    } catch (...) {
      close(fds[0]);
      close(fds[1]);
      throw;
    }
    setpgid(pid, pid);  // also here: a signal sent before the child's own setpgid must reach its group
    close(fds[1]);
    read_fd = fds[0];
    supervise(pid, read_fd, spec, config, dir->file("stdout.txt"), writer, progress ? &*progress : nullptr, run);
    close(read_fd);
    read_fd = -1;

    // How it ended, most telling cause first.
    const std::string tail = stderr_tail(dir->file("stderr.txt"));
    const auto with_tail = [&](std::string reason) { return tail.empty() ? reason : reason + "; stderr: " + tail; };
    if (run.status == RunStatus::skipped) {
      if (progress) progress->finish("skipped");
      finish(RunStatus::skipped, run.reason, {});
      out.metrics.reset();
      return out;
    }
    std::optional<logs::ParsedLog> log;
    if (run.status == RunStatus::running) {
      if (run.exit.exit_code == 127 && run.steps.empty() && tail.find("cannot start") != std::string::npos)
        run.status = RunStatus::failed,
        run.reason = fmt::format("command not found: {}{}", tail,
                                 spec.missing_hint.empty() ? "" : " (" + spec.missing_hint + ")");
      else if (run.exit.exit_code != 0)
        run.status = RunStatus::failed,
        run.reason = with_tail(run.exit.term_signal ? fmt::format("killed by signal {}", run.exit.term_signal)
                                                    : fmt::format("exited with code {}", run.exit.exit_code));
    }
    if (run.status == RunStatus::running || run.status == RunStatus::interrupted || run.status == RunStatus::diverged) {
      try {
        log = logs::parse_log_file(dir->file("stdout.txt.records"), spec.format);
      } catch (const std::exception& e) {
        if (run.status == RunStatus::running) {
          run.status = RunStatus::failed;
          run.reason = with_tail(fmt::format("printed nothing parseable as {} ({})", spec.format, e.what()));
        }
      }
    }
    if (run.status == RunStatus::running && log && inputs.expected_params > 0) {
      if (!log->params)
        run.status = RunStatus::failed,
        run.reason = fmt::format("printed no parameter count; the case has {} parameters", inputs.expected_params);
      else if (*log->params != inputs.expected_params)
        run.status = RunStatus::failed,
        run.reason = fmt::format("trains {} parameters, the case expects {}", *log->params, inputs.expected_params);
    }
    // Steps covered: a log written every k steps has records of span k (harness/logs/parsed_log.h).
    int64_t covered = 0;
    if (log)
      for (const auto& p : log->steps) covered += p.span;
    if (run.status == RunStatus::running && log && covered < config.train.steps)
      run.status = RunStatus::failed,
      run.reason = fmt::format("printed {} of the case's {} steps", covered, config.train.steps);
    if (run.status == RunStatus::running) run.status = RunStatus::completed;
    if (run.status != RunStatus::completed && !run.reason.empty() && run.status == RunStatus::failed)
      run.reason = fmt::format("{}: {}", who, run.reason);

    store::MetricList metrics;
    if (!run.steps.empty()) {
      TrainResult result;
      result.status = run.status;
      result.steps = run.steps;
      if (log && !log->eval_losses.empty()) result.eval_loss = log->eval_losses.back().second;
      const int64_t params = log && log->params ? *log->params : inputs.expected_params;
      RunMetrics m = run_metrics(result, params, make_plan(config, 1).flops.total());
      if (run.peak_memory) m.peak_memory_bytes = static_cast<int64_t>(*run.peak_memory);
      else if (log && log->memory_bytes) m.peak_memory_bytes = static_cast<int64_t>(*log->memory_bytes);
      if (log && log->memory_pct) m.memory_pct = *log->memory_pct;
      m.peak_rss_bytes = run.peak_rss_bytes;
      out.metrics = m;
      metrics = metrics::to_list(m);
    }
    if (progress) progress->finish(std::string(to_string(run.status)));
    if (run.status == RunStatus::failed) dir->keep();  // the output is worth reading
    if (run.status == RunStatus::failed) run.reason += fmt::format(" (output kept in {})", dir->path().string());
    out.status = run.status;
    out.reason = run.reason;
    finish(out.status, out.reason, metrics);
    return out;
  } catch (const std::exception& e) {
    // Never leave the trainer running behind a failed run (e.g. the store failed mid-run).
    if (read_fd >= 0) close(read_fd);
    if (pid > 0 && !run.exited) {
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    try {
      writer.flush();
    } catch (const std::exception&) {
    }
    if (progress) progress->finish("failed");
    finish(RunStatus::failed, fmt::format("{}: {}", who, e.what()), {});
    return out;
  }
}

}  // namespace

std::unique_ptr<Executor> make_external_executor() { return std::make_unique<ExternalExecutor>(); }

}  // namespace twinbench
