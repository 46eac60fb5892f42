// The four trainer-log formats `twinbench import` reads: one parser each
// (maxtext.cpp, torchtitan.cpp, nanogpt.cpp, jsonl.cpp) and the record
// signatures auto-detection (detect.cpp) looks for. Each parser streams its
// input (bounded memory), hashes it, and returns a ParsedLog or throws
// ParseError. Rules shared by all formats (log_builder.h):
//   - step numbers increase strictly; a repeated or smaller one is an error
//     naming both lines (eval records likewise among themselves);
//   - a record line that does not parse is an error naming what was
//     expected;
//   - the file's last line, when it has no final newline, is taken as cut
//     off mid-write: a record there is skipped and counted even if it
//     parses (its last number may be cut), except a jsonl object that
//     parses (it is whole) and, for nanogpt, records the end of input did
//     not reach (a collapsed log is all one unterminated line); the run is
//     then interrupted (ParsedLog::interrupted);
//   - a log that ends before the step its run planned (where the format
//     says it, see each format) is interrupted too, unless it says why the
//     run stopped early;
//   - with torchrun's `[rankK]:` tags, only the rank of the first record
//     is read; other ranks' records are counted in one note;
//   - lines over kMaxLineBytes (1 MiB) and lines holding NUL bytes are
//     skipped and counted (nanogpt reads tokens, not lines: no cap);
//   - a nan/inf loss is kept as NaN (the run diverged); any other non-finite
//     figure is left empty, skipped and counted;
//   - no step record at all is an error.
// ANSI colour codes and logger or collector prefixes (text.h:
// strip_log_prefix) are ignored by every format (jsonl: on a line that
// does not start with '{'). Gzip and collector envelopes are removed
// before a parser sees the text (parse.h).
#pragma once

#include <istream>
#include <string>
#include <string_view>

#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

// ---- maxtext ------------------------------------------------------------------------
// Steps: `completed step: N, seconds: S, TFLOP/s/device: F, Tokens/s/device: T,
// total_weights: W, loss: L[, more: x]` (seconds and loss required) ->
// seconds, tflops_per_s, tokens_per_s, loss; tokens = W / Num_devices when
// `Num_devices: D` was logged. Tunix-driven MaxText (seed 001):
// `loss=array(L, dtype=float32), self._train_steps=K` is step K-1 (the line
// follows "Starting train step K-1"), loss only.
// Eval: `eval metrics after step: N, loss=L, ...`.
// Checkpoints: `Saving checkpoint at step N` marks step N is_checkpoint.
// Params: the first `( # Param: 8,030,261,248 (` module header (exact) or
// `number parameters: 1.104 billion` (rounded: provenance "params_rounded").
// Memory: blocks of `Using (GB) U / C (P%) on DEV` or `Using U GiB / C GiB
// (P%) on DEV` lines (Memstats / "HBM usage" reports): memory_bytes and
// memory_pct are the means over the devices of the LAST block (MaxView's
// Memory %), memory_total_bytes its capacity ("(GB)" is 2^30 bytes, as
// MaxText computes it). `Total memory size: ...` (the compiled step's
// footprint) goes to provenance "compiled_memory".
// Provenance: config.* (`Config param K: V`), model (`Running Model:`),
// jax_version/jaxlib_version/jax_backend (`System Information:`), device
// (`TFRT TPU v6 lite` -> "TPU v6 lite", else the device prefix of the memory
// lines), num_devices, orbax_checkpoint_version, tflops_per_step (`Total
// TFLOPs:`), xpk_start, exit_code. Planned: steps 0 .. `Config param steps`
// - 1; a line with `Stopping training` or `dataset is exhausted` explains an
// early stop (seed 001).
ParsedLog parse_maxtext(std::istream& in, const std::string& file_name);
bool maxtext_record(std::string_view body);  // body: ANSI/prefix removed

// ---- torchtitan ---------------------------------------------------------------------
// Steps: `step: N  loss: L  [grad_norm: G]  memory: M GiB(P%)  tps: T
// [tflops: F]  mfu: U%` in any order, unknown fields ignored -> loss,
// grad_norm, memory_bytes (max reserved) and memory_pct, tokens_per_s (per
// device; older versions' `wps` too), tflops_per_s, mfu (percent). seconds: from the logger's
// timestamps, the time since the previous step or `validate step:` line
// (torchtitan also leaves validation out of tps) divided by the steps
// between them (span); none for the first step line or without timestamps.
// Eval: `validate step: N  loss: L ...`.
// Ranks: with torchrun's `[rankK]:` tags only the rank of the first step
// line (normally rank 0) is read; other ranks' records are counted in one
// skip note.
// Params: `[Model ]<name> <flavor> size: 8,030,261,248 total parameters`.
// Memory: `<GPU|CUDA|...> capacity: <device> with 79.11GiB memory` ->
// memory_total_bytes and provenance device. Provenance: model, job
// (`Starting job:`), peak_flops (`Peak FLOPS used for computing MFU:`).
// Planned: steps up to N of `Training starts at step 1, ..., total steps N`;
// `Ran out of data` explains an early stop.
ParsedLog parse_torchtitan(std::istream& in, const std::string& file_name);
bool torchtitan_record(std::string_view body);

// ---- nanogpt (modded-nanogpt / parameter-golf) --------------------------------------
// Read as whitespace-separated tokens, so records are found anywhere in a
// line (seed 004's log lost its newlines) and the training script printed
// before the log cannot match (`step:{step}/{train_steps}` is not `step:N/M`).
// Steps: `step:N/M train_time:Tms step_avg:Ams` (modded-nanogpt records: no
// loss, so the step's loss is unknown) or `step:N/M train_loss:L train_time:Tms
// step_avg:Ams`. seconds = (T - T_prev) / (N - N_prev) / 1000 with (N_prev,
// T_prev) the latest earlier timed record (train or val; (0, 0) at the
// start, as train_time counts from step 0): a log written every 200 steps
// gives each record the mean time per step over its 200 steps (span = 200).
// A train_time lower than T_prev while N grows is a reset clock (2024
// records restart it after 10 warm-up steps): timed from 0 at N_prev
// (provenance train_time_resets). `warmup_step:` tokens are not steps.
// tokens = train_batch_tokens / world_size when both were logged.
// Eval: `step:N/M val_loss:V [val_bpb:B] train_time:Tms step_avg:Ams` is the
// eval loss at step N. Its train_time (the clock stopped, device
// synchronised, before validating) ends step N: step N's time runs to it,
// and a val record at a step with no training record of its own (step 0, or
// parameter-golf's last step) is a step row of its own, loss unknown.
// Unknown `name:value` fields of a record (val_bpb, ...) are ignored.
// step_avg: the last finite one is the log's own mean step time
// (tool_step_avg_s). Planned: M of the last record; a log ending before step
// M is interrupted unless it says `stopping_early:` (parameter-golf's
// wall-clock cap). Ranks: with torchrun's `[rankK]:` tags only the rank of
// the first record is read.
// Params: `model_params:N`. Memory: `peak memory allocated: X MiB` (2024:
// `peak memory consumption: X MiB`) -> memory_bytes; nvidia-smi's `U MiB /
// C MiB` -> memory_total_bytes. Provenance: config.* (numeric or boolean
// `key:value` tokens before the first record and after the last `=====`
// separator before it, which ends modded-nanogpt's echoed script),
// pytorch_version/python_version (`Running PyTorch X`),
// cuda_version/driver_version, device (nvidia-smi's `NVIDIA ...` name).
ParsedLog parse_nanogpt(std::istream& in, const std::string& file_name);
// `token` is `step:N/M` and `next` starts `train_loss:`, `val_loss:` or `train_time:`.
bool nanogpt_record(std::string_view token, std::string_view next);

// ---- jsonl --------------------------------------------------------------------------
// One JSON object per line; blank lines ignored; no logger prefixes. Python's
// bare NaN / Infinity / -Infinity are accepted as numbers.
//
// Step line: an object with "step". Fields (the step columns of `twinbench
// export`, so its step objects import unchanged):
//   step           integer >= 0, required; strictly increasing
//   loss           number; null = NaN (export writes a diverged step's NaN as null)
//   step_time_s    number, seconds of wall time for this optimizer step -> seconds
//   tokens         number, tokens this step processed per device
//   is_warmup      boolean (or 0/1)
//   is_eval        boolean (or 0/1): an evaluation ran at this step
//   is_checkpoint  boolean (or 0/1): a checkpoint was written at this step
//   is_stall       boolean (or 0/1): a stall by twinbench's outlier rule (export
//                  writes it; the importer applies the rule again either way)
//   eval_loss      number or null (null = none)
// optional, per device:
//   tokens_per_s, tflops_per_s, memory_bytes, memory_pct (% of capacity),
//   mfu (percent), grad_norm      numbers or null (null = absent)
// Any other key is ignored and counted (one skip note per key name).
//
// Run line: `{"twinbench_run": {...}}` (any line; usually the first), or an
// object without "step". Keys: params (integer), memory_total_bytes,
// peak_memory_bytes (alias memory_bytes) and memory_pct (run-level memory),
// provenance / provenance_json (object: each key to provenance), config /
// config_json (object: flattened to provenance "config.<dotted key>"); any
// other scalar goes to provenance as is (so an exported run object fits);
// arrays and other objects are ignored and counted. Planned (an exported
// twinbench run): steps 0 .. config train.steps - 1; a run line with
// "status": "interrupted" keeps that status.
ParsedLog parse_jsonl(std::istream& in, const std::string& file_name);
bool jsonl_record(std::string_view raw_line);

// Weak hints, used by detection only when no format's records were found,
// so that a log without steps gets the format's own "no step lines" error.
bool maxtext_hint(std::string_view body);     // `Config param `, `number parameters: `
bool torchtitan_hint(std::string_view raw);   // `[titan]`
bool nanogpt_hint(std::string_view token);    // `model_params:N`, `warmup_step:N/M`

}  // namespace twinbench::logs
