// Exporting stored runs for notebooks and spreadsheets (`twinbench export`):
// one CSV line or JSON object per run with every metric as its own column, or
// one CSV line per step / a nested "steps" array on request; and JSON lines,
// the format `twinbench import --format jsonl` reads back.
#pragma once

#include <string>

#include "harness/store/store.h"

namespace twinbench::store {

enum class ExportFormat { kCsv, kJson, kJsonl };

// The runs `filter` selects, in Store::runs() order (newest first). Columns:
// run_id, group_id, case, variant, repeat, status, reason, started_at,
// finished_at, host, git_commit, git_branch, device_name, world_size,
// hardware_fingerprint, then
// every metric name found across the selected runs, sorted (empty / null
// where a run lacks it or its value is NULL), then config_json and
// provenance_json. A metric whose name is one of the fixed column names (of
// runs or steps, e.g. "eval_loss") or "steps" is named "metric.<name>", in
// both formats and with or without steps, so that no two columns share a name.
//
// kCsv: RFC 4180 (CRLF line ends; a field with a comma, quote, CR or LF is
// quoted, quotes doubled), a header line first, numbers in their shortest
// exact form, NULL as an empty field; the JSON columns as their text. With
// `with_steps`, one line per step instead (runs without steps have none), the
// run columns followed by step, loss, step_time_s, tokens, is_warmup, is_eval,
// is_checkpoint, eval_loss, is_stall (a NaN loss or unknown step time is empty).
//
// kJson: an array of objects with the same keys in the same order; config_json
// and provenance_json nested as objects (left as strings if they do not
// parse), NULL/NaN/±Inf as null. With `with_steps`, each object ends with a
// "steps" array of objects with the step columns (flags as booleans).
//
// kJsonl: per run, one line `{"twinbench_run": {...}}` holding the run's JSON
// object (as kJson, without steps), then one line per step holding its step
// object (as kJson's "steps" entries: NaN loss and unknown times as null).
// `with_steps` is implied. `twinbench import --format jsonl` reads a file of
// one such run back as one run (docs/cli.md, "jsonl").
std::string export_runs(const Store& store, const RunFilter& filter, ExportFormat format,
                        bool with_steps);
// The same for one stored run (`export --run ID`); StoreError when there is none.
std::string export_run(const Store& store, const std::string& run_id, ExportFormat format, bool with_steps);

}  // namespace twinbench::store
