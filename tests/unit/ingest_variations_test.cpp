// Every importer against a corpus of variations generated here from the real
// shapes of each format (MaxText seed 000, torchtitan, parameter-golf seed 004,
// a modded-nanogpt record, twinbench's own JSON lines): CRLF line ends, ANSI
// colours, torchrun rank prefixes and interleaved ranks, log collectors
// (kubectl/GitHub timestamps, CRI and Docker json-file envelopes with split
// lines), a truncated last line, a file cut mid-run, gzip (whole and cut),
// and each log given to every wrong --format. Each variation is parsed,
// stored in a real store and read back: the exact steps, losses, times and
// eval losses stored, the run's status and reason, or the exact error.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/base/temp_dir.h"
#include "harness/ingest/import_log.h"
#include "harness/logs/parse.h"
#include "harness/store/store.h"

namespace twinbench::ingest::variations {
namespace {

using logs::ParsedLog;
using logs::ParseError;
using logs::parse_log;

using Opt = std::optional<double>;

// One stored step as it should read back.
struct Row {
  int64_t step;
  Opt loss, seconds, eval;
};

// A log of one format: lines before the records, the record lines (train,
// eval), lines after them; the steps it stores; where a cut mid-run leaves it.
struct Corpus {
  std::string name, format;
  std::vector<std::string> head, events, tail;
  std::vector<Row> rows;
  size_t cut_events = 0, cut_rows = 0;  // a file cut mid-run keeps events[0, cut_events): rows[0, cut_rows)
  int64_t planned = 0;                  // the last step the run planned
  int64_t first_record_line = 0;        // what auto-detection names
  Opt step_avg;                         // the log's own mean step time (nanogpt)

  std::vector<std::string> lines(size_t events_kept, bool with_tail) const {
    std::vector<std::string> out = head;
    out.insert(out.end(), events.begin(), events.begin() + static_cast<std::ptrdiff_t>(events_kept));
    if (with_tail) out.insert(out.end(), tail.begin(), tail.end());
    return out;
  }
  std::vector<std::string> all_lines() const { return lines(events.size(), true); }
};

std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return text;
}

// ---- the corpus: one generator per format, `off` shifts every loss (a second
// rank that logs different numbers, so that mixing ranks would show) ------------

Corpus maxtext(double off) {
  Corpus c;
  c.name = "maxtext";
  c.format = "maxtext";
  const std::string p = "I0424 09:20:{:02}.{:06} 135780342482752 ";
  c.head = {fmt::format(p, 0, 840018) + "maxtext_utils.py:1771] Num_devices: 4, shape (1, 1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1)",
            fmt::format(p, 1, 100) + "pyconfig.py:301] Config param steps: 6",
            fmt::format(p, 24, 846762) + "metric_logger.py:301] number parameters: 1.104 billion"};
  const double seconds[] = {14.801, 1.188, 0.230, 0.231, 0.229, 0.232};
  const double loss[] = {10.874, 10.2, 9.7, 9.3, 9.0, 8.8};
  for (int s = 0; s < 6; ++s) {
    c.events.push_back(fmt::format(p, 40 + s, 837522) +
                       fmt::format("metric_logger.py:196] completed step: {}, seconds: {:.3f}, TFLOP/s/device: "
                                   "59.222, Tokens/s/device: 8926.626, total_weights: 8192, loss: {:.3f}, lm_loss: "
                                   "{:.3f}, perplexity: 3552.333",
                                   s, seconds[s], loss[s] + off, loss[s] + off));
    c.rows.push_back({s, loss[s] + off, seconds[s], {}});
    if (s == 3) {
      c.events.push_back(fmt::format(p, 44, 100) + fmt::format("train.py:500] eval metrics after step: 3, "
                                                               "loss={:.3f}, total_weights=75264.0",
                                                               9.1 + off));
      c.rows.back().eval = 9.1 + off;
    }
  }
  c.tail = {fmt::format(p, 59, 1) + "train.py:900] XPK End: Fri Apr 24 09:22:22 UTC 2026", "EXIT_CODE=0"};
  c.cut_events = 5;  // steps 0-3 and the eval at 3
  c.cut_rows = 4;
  c.planned = 5;
  c.first_record_line = 4;
  return c;
}

Corpus torchtitan(double off) {
  Corpus c;
  c.name = "torchtitan";
  c.format = "torchtitan";
  const auto at = [](int ms) {  // ms after 14:32:00
    return fmt::format("[titan] 2025-10-30 14:{:02}:{:02},{:03} - root - INFO - ", 32 + ms / 60000, ms / 1000 % 60,
                       ms % 1000);
  };
  c.head = {at(50101) + "Starting job: Llama 3 debug training",
            at(52000) + "CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory",
            at(52100) + "\x1b[34mModel llama3 debugmodel \x1b[31msize: 6,139,136 total parameters\x1b[39m",
            at(53000) + "Trainer initialized. Training starts at step 1, with local batch size 8, global batch size "
                        "16, gradient accumulation steps 1, sequence length 2048, total steps 6 (warmup 2)"};
  const int ms[] = {58897, 58990, 59077, 60000, 60090, 60180};
  const double loss[] = {8.1661, 6.1098, 4.7947, 4.1532, 3.9876, 3.8123};
  const Opt seconds[] = {{}, 0.093, 0.087, 0.100, 0.090, 0.090};  // step 4 from the validation at 59.900
  for (int i = 0; i < 6; ++i) {
    c.events.push_back(at(ms[i]) + fmt::format("\x1b[31mstep: {:2}  \x1b[32mloss: {:8.5f}  \x1b[38;2;180;60;0mgrad_norm:  "
                                               "1.8004  \x1b[38;2;54;234;195mmemory:  2.49GiB(3.14%)  \x1b[34mtps: "
                                               "182,000  \x1b[36mtflops: 98.81  \x1b[35mmfu: 9.99%\x1b[39m",
                                               i + 1, loss[i] + off));
    c.rows.push_back({i + 1, loss[i] + off, seconds[i], {}});
    if (i == 2) {
      c.events.push_back(at(59900) + fmt::format("\x1b[33mvalidate step:  3  \x1b[32mloss: {:7.4f}  "
                                                 "\x1b[38;2;54;234;195mmemory:  2.51GiB(3.17%)  \x1b[34mtps: 350,123\x1b[39m",
                                                 4.41 + off));
      c.rows.back().eval = 4.41 + off;
    }
  }
  c.tail = {at(61500) + "Training completed"};
  c.cut_events = 4;  // steps 1-3 and the validation at 3
  c.cut_rows = 3;
  c.planned = 6;
  c.first_record_line = 5;
  return c;
}

Corpus parameter_golf(double off) {
  Corpus c;
  c.name = "parameter-golf";
  c.format = "nanogpt";
  c.head = {"    log0(f\"step:{step}/{args.iterations} train_loss:{train_loss.item():.4f} "
            "train_time:{training_time_ms:.0f}ms step_avg:{training_time_ms / step:.2f}ms\")",
            std::string(100, '='),
            "model_params:17059912",
            "world_size:8 grad_accum_steps:1",
            "train_batch_tokens:393216 train_seq_len:4096 iterations:40 warmup_steps:2",
            "warmup_step:1/2",
            "warmup_step:2/2"};
  const auto train = [&](int step, double loss, int ms, double avg) {
    c.events.push_back(
        fmt::format("step:{}/40 train_loss:{:.4f} train_time:{}ms step_avg:{:.2f}ms", step, loss + off, ms, avg));
  };
  const auto val = [&](int step, double loss, int ms, double avg) {
    c.events.push_back(fmt::format("step:{}/40 val_loss:{:.4f} val_bpb:3.0000 train_time:{}ms step_avg:{:.2f}ms", step,
                                   loss + off, ms, avg));
  };
  val(0, 6.9372, 0, 0.02);
  train(1, 6.9377, 40, 40.37);
  train(2, 6.5, 102, 50.86);
  train(10, 5.9, 640, 64.0);
  train(20, 5.1, 1300, 65.0);
  val(20, 5.2, 1330, 66.5);
  train(30, 4.6, 1990, 66.33);
  train(40, 4.2, 2650, 66.25);
  val(40, 4.3, 2680, 67.0);
  c.tail = {"peak memory allocated: 7748 MiB reserved: 8066 MiB",
            "final_int8_zlib_roundtrip val_loss:4.3100 val_bpb:2.5521 eval_time:2098ms"};
  c.rows = {{0, {}, {}, 6.9372 + off},
            {1, 6.9377 + off, 0.040, {}},
            {2, 6.5 + off, 0.062, {}},
            {10, 5.9 + off, (640.0 - 102.0) / 8 / 1000, {}},
            {20, 5.1 + off, (1330.0 - 640.0) / 10 / 1000, 5.2 + off},  // to the validation's time
            {30, 4.6 + off, (1990.0 - 1330.0) / 10 / 1000, {}},
            {40, 4.2 + off, (2680.0 - 1990.0) / 10 / 1000, 4.3 + off}};
  c.cut_events = 7;  // through step 30
  c.cut_rows = 6;
  c.planned = 40;
  c.first_record_line = 8;
  c.step_avg = 0.067;
  return c;
}

Corpus modded_nanogpt(double off) {
  Corpus c;
  c.name = "modded-nanogpt";
  c.format = "nanogpt";
  c.head = {"import os",
            "        print0(f\"step:{step}/{train_steps} val_loss:{val_loss:.4f} train_time:{training_time_ms:.0f}ms "
            "step_avg:{training_time_ms/max(step, 1):.2f}ms\", console=True)",
            "    print0(f\"step:{step+1}/{train_steps} train_time:{approx_training_time_ms:.0f}ms "
            "step_avg:{approx_training_time_ms/(step + 1):.2f}ms\", console=True)",
            "    def lookup(self, step: int) -> tuple[TrainingStage, float]:",
            std::string(100, '='),
            "Running Python 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]",
            "Running PyTorch 2.10.0+cu128 compiled for CUDA 12.8",
            std::string(100, '='),
            "Compiling model and warming up kernels (~7 minutes on first execution)",
            "Resetting Model"};
  const auto train = [&](int step, int ms) {
    c.events.push_back(fmt::format("step:{}/8 train_time:{}ms step_avg:{:.2f}ms", step, ms, ms / double(step)));
  };
  const auto val = [&](int step, double loss, int ms) {
    c.events.push_back(fmt::format("step:{}/8 val_loss:{:.4f} train_time:{}ms step_avg:{:.2f}ms", step, loss + off, ms,
                                   ms / double(std::max(step, 1))));
  };
  val(0, 10.8296, 0);
  train(1, 90);
  train(2, 124);
  train(3, 150);
  train(4, 185);
  val(4, 7.5, 219);
  train(5, 245);
  train(6, 274);
  train(7, 306);
  train(8, 334);
  val(8, 6.1, 380);
  c.tail = {"peak memory allocated: 30908 MiB reserved: 46472 MiB"};
  // No training loss in these logs: none is stored.
  c.rows = {{0, {}, {}, 10.8296 + off}, {1, {}, 0.090, {}}, {2, {}, 0.034, {}},
            {3, {}, 0.026, {}},         {4, {}, 0.069, 7.5 + off},  // 150 -> the validation's 219 ms
            {5, {}, 0.026, {}},         {6, {}, 0.029, {}},         {7, {}, 0.032, {}},
            {8, {}, 0.074, 6.1 + off}};
  c.cut_events = 8;  // through step 6
  c.cut_rows = 7;
  c.planned = 8;
  c.first_record_line = 11;
  c.step_avg = 0.0475;
  return c;
}

Corpus jsonl(double off) {
  Corpus c;
  c.name = "jsonl";
  c.format = "jsonl";
  c.head = {R"({"twinbench_run": {"run_id": "r-0001", "case": "01_base", "variant": "module", "status": "completed", )"
            R"("params": 1104218112, "config_json": {"model": {"preset": "tiny"}, "train": {"steps": 5}}}})"};
  const double seconds[] = {1.25, 0.25, 0.26, 0.24, 0.25};
  const double loss[] = {10.5, 10.1, 9.8, 9.5, 9.25};
  for (int s = 0; s < 5; ++s) {
    const bool eval = s == 2;
    c.events.push_back(fmt::format(R"({{"step": {}, "loss": {}, "step_time_s": {}, "tokens": 2048, "is_warmup": {}, )"
                                   R"("is_eval": {}, "is_checkpoint": false, "eval_loss": {}}})",
                                   s, loss[s] + off, seconds[s], s == 0, eval, eval ? fmt::format("{}", 9.9 + off) : "null"));
    c.rows.push_back({s, loss[s] + off, seconds[s], eval ? Opt(9.9 + off) : Opt()});
  }
  c.cut_events = 3;
  c.cut_rows = 3;
  c.planned = 4;
  c.first_record_line = 1;  // the run line is a jsonl record too
  return c;
}

const std::vector<std::function<Corpus(double)>>& corpora() {
  static const std::vector<std::function<Corpus(double)>> all = {maxtext, torchtitan, parameter_golf, modded_nanogpt,
                                                                 jsonl};
  return all;
}

// ---- variations of the text -------------------------------------------------

std::string crlf(const std::string& text) {
  std::string out;
  for (char ch : text) out += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  return out;
}

// Colour codes around every word (around the whole line for JSON, whose
// colouring terminal does not reach inside strings).
std::string ansi(const Corpus& c) {
  std::vector<std::string> out;
  int colour = 0;
  for (const auto& line : c.all_lines()) {
    if (c.format == "jsonl") {
      out.push_back("\x1b[32m" + line + "\x1b[0m");
      continue;
    }
    std::string coloured;
    size_t i = 0;
    while (i < line.size()) {
      const size_t word = line.find_first_not_of(' ', i);
      coloured += line.substr(i, word == std::string::npos ? std::string::npos : word - i);
      if (word == std::string::npos) break;
      const size_t end = std::min(line.find(' ', word), line.size());
      coloured += fmt::format("\x1b[1;{}m{}\x1b[0m", 31 + colour++ % 6, line.substr(word, end - word));
      i = end;
    }
    out.push_back(coloured);
  }
  return join(out);
}

std::vector<std::string> prefixed(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(prefix + l);
  return out;
}

// Two ranks printing to one stream: rank 0's first record comes first, then
// the ranks' lines alternate in order.
std::string interleaved(const Corpus& rank0, const Corpus& rank1) {
  const auto a = rank0.all_lines(), b = rank1.all_lines();
  std::vector<std::string> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool zero_first = i <= rank0.head.size() || i % 2 == 0;
    out.push_back((zero_first ? "[rank0]:" : "[rank1]:") + (zero_first ? a[i] : b[i]));
    out.push_back((zero_first ? "[rank1]:" : "[rank0]:") + (zero_first ? b[i] : a[i]));
  }
  return join(out);
}

std::string rfc3339(size_t i) { return fmt::format("2026-07-17T12:22:51.{:09}Z", i); }

// kubectl logs --timestamps / GitHub Actions: an RFC 3339 time before each line.
std::string timestamped(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) out.push_back(rfc3339(i) + " " + lines[i]);
  return join(out);
}

// containerd's CRI log: "<time> stdout F <line>"; the first record line split
// by the collector into a partial (P) piece and the rest.
std::string cri(const Corpus& c) {
  std::vector<std::string> out;
  const auto lines = c.all_lines();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == c.head.size()) {
      const size_t half = lines[i].size() / 2;
      out.push_back(rfc3339(i) + " stdout P " + lines[i].substr(0, half));
      out.push_back(rfc3339(i) + " stdout F " + lines[i].substr(half));
    } else {
      out.push_back(rfc3339(i) + " stdout F " + lines[i]);
    }
  }
  return join(out);
}

// Docker's json-file driver: one JSON object per piece; the first record line
// split into two pieces (the first without its "\n").
std::string docker(const Corpus& c) {
  std::vector<std::string> out;
  const auto lines = c.all_lines();
  const auto entry = [&](size_t i, const std::string& log) {
    out.push_back(nlohmann::json{{"log", log}, {"stream", "stdout"}, {"time", rfc3339(i)}}.dump());
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == c.head.size()) {
      const size_t half = lines[i].size() / 2;
      entry(i, lines[i].substr(0, half));
      entry(i, lines[i].substr(half) + "\n");
    } else {
      entry(i, lines[i] + "\n");
    }
  }
  return join(out);
}

// Gzip of `text`; `finish` false leaves the stream without its end (a file
// cut while it was written).
std::string gzip(const std::string& text, bool finish = true) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, finish ? Z_FINISH : Z_SYNC_FLUSH), finish ? Z_STREAM_END : Z_OK);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// ---- parsing, storing, reading back --------------------------------------------

struct Stored {
  store::RunRecord run;
  std::vector<StepRecord> steps;
  store::MetricMap metrics;
  int64_t skipped = 0;
  std::vector<std::string> skip_notes;
  std::map<std::string, std::string> provenance;
};

class IngestVariations : public ::testing::Test {
 protected:
  TempDir dir_{"twinbench-variations"};
  std::optional<store::Store> db_;
  int imports_ = 0;

  // `text` parsed as `format`, stored (as a variant of its own), read back.
  Stored import(const std::string& text, const std::string& format) {
    std::istringstream in(text);
    const ParsedLog log = parse_log(in, "test.log", format);
    ImportOptions o;
    o.case_name = "speedrun";
    o.variant = fmt::format("v{}", imports_++);
    const ImportedRun run = build_imported_run(log, "test.log", o);
    if (!db_) db_.emplace(dir_.file("variations.db"));
    EXPECT_EQ(store_imported_run(*db_, run, false), store::ImportOutcome::kAdded);
    Stored out;
    out.run = *db_->run(run.run.run_id);
    out.steps = db_->steps(run.run.run_id);
    out.metrics = db_->metrics(run.run.run_id);
    out.skipped = log.skipped_count;
    out.skip_notes = log.skipped;
    out.provenance = log.provenance;
    return out;
  }

  static std::string error_of(const std::string& text, const std::string& format) {
    try {
      std::istringstream in(text);
      parse_log(in, "test.log", format);
    } catch (const ParseError& e) {
      return e.what();
    }
    return "(no error)";
  }

  // The stored steps are rows[0, rows), exactly.
  static void expect_rows(const Stored& got, const Corpus& c, size_t rows) {
    ASSERT_EQ(got.steps.size(), rows);
    for (size_t i = 0; i < rows; ++i) {
      const StepRecord& s = got.steps[i];
      const Row& want = c.rows[i];
      SCOPED_TRACE(fmt::format("step {}", want.step));
      EXPECT_EQ(s.step, want.step);
      if (want.loss) {
        EXPECT_NEAR(s.loss, *want.loss, 1e-12);
      } else {
        EXPECT_TRUE(std::isnan(s.loss)) << s.loss;  // unknown: NULL, never invented
      }
      if (want.seconds) {
        EXPECT_NEAR(s.seconds, *want.seconds, 1e-12);
      } else {
        EXPECT_TRUE(std::isnan(s.seconds)) << s.seconds;
      }
      ASSERT_EQ(s.eval_loss.has_value(), want.eval.has_value());
      if (want.eval) {
        EXPECT_NEAR(*s.eval_loss, *want.eval, 1e-12);
      }
      EXPECT_EQ(s.eval, want.eval.has_value());
    }
  }

  // A whole log, stored complete.
  void expect_complete(const std::string& text, const Corpus& c, int64_t skipped = 0,
                       const std::function<void(const Stored&)>& more = {}) {
    for (const std::string& format : {c.format, std::string("auto")}) {
      SCOPED_TRACE(c.name + " as " + format);
      const Stored got = import(text, format);
      expect_rows(got, c, c.rows.size());
      EXPECT_EQ(got.run.status, RunStatus::completed) << got.run.reason;
      EXPECT_EQ(got.skipped, skipped);
      const auto last_eval = std::find_if(c.rows.rbegin(), c.rows.rend(), [](const Row& r) { return r.eval.has_value(); });
      ASSERT_NE(last_eval, c.rows.rend());
      EXPECT_NEAR(*got.metrics.at("eval_loss"), *last_eval->eval, 1e-12);
      if (c.rows.back().loss) {
        EXPECT_NEAR(*got.metrics.at("final_loss"), *c.rows.back().loss, 1e-12);
      } else {
        EXPECT_FALSE(got.metrics.at("final_loss").has_value());  // none logged: missing
      }
      if (c.step_avg) {
        EXPECT_NEAR(*got.metrics.at("nanogpt_step_avg_s"), *c.step_avg, 1e-12);
      } else {
        EXPECT_EQ(got.metrics.count("nanogpt_step_avg_s"), 0u);
      }
      if (more) more(got);
    }
  }
};

TEST_F(IngestVariations, CleanCrlfColoursAndRankPrefix) {
  for (const auto& make : corpora()) {
    const Corpus c = make(0);
    expect_complete(join(c.all_lines()), c);
    expect_complete(crlf(join(c.all_lines())), c);
    expect_complete(ansi(c), c);
    expect_complete(join(prefixed(c.all_lines(), "[rank0]:")), c);
    expect_complete(join(prefixed(c.all_lines(), "[default0]:")), c);
  }
}

TEST_F(IngestVariations, InterleavedRanksReadTheFirstRankOnly) {
  for (const auto& make : corpora()) {
    const Corpus c = make(0), other = make(1.0);  // rank 1 logs other losses
    expect_complete(interleaved(c, other), c, 1, [&](const Stored& got) {
      ASSERT_EQ(got.skip_notes.size(), 1u);
      EXPECT_EQ(got.skip_notes[0],
                fmt::format("{} record lines of other ranks (1) ignored: rank 0 is read", c.events.size()));
    });
  }
}

TEST_F(IngestVariations, LogCollectors) {
  for (const auto& make : corpora()) {
    const Corpus c = make(0);
    expect_complete(timestamped(c.all_lines()), c);
    expect_complete(cri(c), c, 0, [](const Stored& got) {
      EXPECT_EQ(got.provenance.at("collector"), "cri");
      EXPECT_EQ(got.provenance.at("collector_joined_lines"), "1");
    });
    expect_complete(docker(c), c, 0, [](const Stored& got) {
      EXPECT_EQ(got.provenance.at("collector"), "docker-json");
      EXPECT_EQ(got.provenance.at("collector_joined_lines"), "1");
    });
  }
}

TEST_F(IngestVariations, GzipWholeAndCut) {
  for (const auto& make : corpora()) {
    const Corpus c = make(0);
    const std::string text = join(c.all_lines());
    const std::string packed = gzip(text);
    expect_complete(packed, c, 0, [&](const Stored& got) {
      EXPECT_EQ(got.provenance.at("compression"), "gzip");
      EXPECT_EQ(got.provenance.at("compressed_bytes"), std::to_string(packed.size()));
    });
    // The same text plain or compressed is the same content: the same run.
    std::istringstream plain(text), compressed(packed);
    EXPECT_EQ(parse_log(plain, "a.log", "auto").sha256, parse_log(compressed, "a.log.gz", "auto").sha256);

    // Compressed data without its end: everything in it is read, and the run
    // is interrupted at its last complete step.
    const std::string cut = gzip(text, false);
    const Stored got = import(cut, "auto");
    SCOPED_TRACE(c.name);
    expect_rows(got, c, c.rows.size());
    EXPECT_EQ(got.run.status, RunStatus::interrupted);
    EXPECT_EQ(got.run.reason,
              fmt::format("the gzip data ends before its end marker after {} compressed bytes (a file cut "
                          "mid-write): the run stops at its last complete step, {} (test.log)",
                          cut.size(), c.rows.back().step));
    EXPECT_EQ(got.skipped, 1);

    // Corrupt compressed data is an error, not a shorter log.
    std::string corrupt = packed;
    for (size_t i = 20; i < 40 && i < corrupt.size(); ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    EXPECT_NE(error_of(corrupt, "auto").find("test.log: corrupt gzip data after "), std::string::npos)
        << error_of(corrupt, "auto");
  }
}

TEST_F(IngestVariations, TruncatedLastLineIsInterruptedAtTheLastCompleteStep) {
  for (const auto& make : corpora()) {
    const Corpus c = make(0);
    // The record after the cut point, cut in the middle, without a newline.
    std::vector<std::string> lines = c.lines(c.cut_events + 1, false);
    lines.back() = lines.back().substr(0, lines.back().size() / 2);
    std::string text = join(lines);
    text.pop_back();
    for (const std::string& format : {c.format, std::string("auto")}) {
      SCOPED_TRACE(c.name + " as " + format);
      const Stored got = import(text, format);
      expect_rows(got, c, c.cut_rows);
      EXPECT_EQ(got.run.status, RunStatus::interrupted);
      EXPECT_EQ(got.run.reason, fmt::format("the log ends in a record cut off mid-write (line {}): the run stops at "
                                            "its last complete step, {} (test.log)",
                                            lines.size(), c.rows[c.cut_rows - 1].step));
      ASSERT_EQ(got.skipped, 1);
      EXPECT_NE(got.skip_notes[0].find("truncated last "), std::string::npos) << got.skip_notes[0];
    }
  }
}

TEST_F(IngestVariations, FileCutMidRunIsInterrupted) {
  for (const auto& make : corpora()) {
    const Corpus c = make(0);
    const std::string text = join(c.lines(c.cut_events, false));  // whole lines, the rest missing
    for (const std::string& format : {c.format, std::string("auto")}) {
      SCOPED_TRACE(c.name + " as " + format);
      const Stored got = import(text, format);
      expect_rows(got, c, c.cut_rows);
      EXPECT_EQ(got.run.status, RunStatus::interrupted);
      EXPECT_EQ(got.run.reason, fmt::format("the log ends at step {} of the {} the run planned (a file cut mid-run?) "
                                            "(test.log)",
                                            c.rows[c.cut_rows - 1].step, c.planned));
      EXPECT_EQ(got.skipped, 0);
    }
  }
}

TEST_F(IngestVariations, WrongFormatNamesTheFormatItLooksLike) {
  const std::map<std::string, std::string> expected = {
      {"maxtext", "`completed step: N, seconds: S, TFLOP/s/device: F, Tokens/s/device: T, total_weights: W, loss: L`"},
      {"torchtitan", "`step: N  loss: L  grad_norm: G  memory: M GiB(P%)  tps: T  tflops: F  mfu: U%`"},
      {"nanogpt", "`step:N/M [train_loss:L] train_time:Tms step_avg:Ams`"}};
  const std::map<std::string, std::string> example = {
      {"maxtext", "`completed step: N, seconds: S, ..., loss: L`"},
      {"torchtitan", "`step: N  loss: L  ...  tps: T  ...`"},
      {"nanogpt", "`step:N/M [train_loss:L] train_time:Tms ...`"},
      {"jsonl", "`{\"step\": N, \"loss\": L, ...}` per line"}};
  for (const auto& make : corpora()) {
    const Corpus c = make(0);
    const std::string text = join(c.all_lines());
    const int64_t lines = static_cast<int64_t>(c.all_lines().size());
    for (const std::string wrong : {"maxtext", "torchtitan", "nanogpt", "jsonl"}) {
      if (wrong == c.format) continue;
      SCOPED_TRACE(c.name + " as " + wrong);
      const std::string error = error_of(text, wrong);
      const std::string hint =
          fmt::format("this looks like a {} log, not {} (records from line {}: {}): pass --format {} or --format auto",
                      c.format, wrong, c.first_record_line, example.at(c.format), c.format);
      if (wrong == "jsonl") {
        // Its first line is not JSON: that line's error, then the hint.
        EXPECT_EQ(error.rfind("test.log:1: not valid JSON (", 0), 0u) << error;
        const std::string tail = std::string("); expected one JSON object per line like ") +
                                 R"({"step": 0, "loss": 10.87, "step_time_s": 0.23, "tokens": 2048})" + "; " + hint;
        EXPECT_EQ(error.substr(error.size() - std::min(error.size(), tail.size())), tail) << error;
      } else {
        EXPECT_EQ(error, fmt::format("test.log: no step lines found in {} lines ({} bytes); expected {} log lines like "
                                     "{}; {}",
                                     lines, text.size(), wrong, expected.at(wrong), hint));
      }
    }
  }
}

}  // namespace
}  // namespace twinbench::ingest::variations
