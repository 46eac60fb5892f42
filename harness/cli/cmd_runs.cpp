// `twinbench runs`: the stored runs, newest first, each with its group (what
// `report pair|nway --group` take); runs whose writer is gone are finished first.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/cli/common.h"
#include "harness/store/store.h"

namespace twinbench::cli {

void add_runs_command(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string db = store::default_location();
    std::string group, case_name, variant, status;
    int64_t limit = 20;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("runs", "list stored runs, newest first (marks runs of dead processes interrupted)");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--group", o->group, "only this group id");
  cmd->add_option("--case", o->case_name, "only this case");
  cmd->add_option("--variant", o->variant, "only this implementation");
  cmd->add_option("--status", o->status, "only this status");
  cmd->add_option("--limit", o->limit, "at most this many (0 = all)");
  cmd->add_flag("--json", o->json, "JSON list on stdout");
  cmd->callback([o, &exit_code] {
    // Listing creates nothing: a store that does not exist is an error.
    store::Store db = open_existing_store(o->db);
    try {
      const int recovered = db.recover_stale_runs();
      if (recovered > 0)
        std::cerr << fmt::format("{}: finished {} stale run(s) left running by processes that are gone\n",
                                 db.path(), recovered);
    } catch (const store::StoreError& e) {
      // A reader (a read-only role or file) still lists; the runs stay as they are.
      if (e.fault() != store::StoreFault::kPermission) throw;
      std::cerr << fmt::format("twinbench: warning: stale runs not recovered (the store is read-only here): {}\n",
                               e.what());
    }
    store::RunFilter filter;
    if (!o->group.empty()) filter.group_id = o->group;
    if (!o->case_name.empty()) filter.case_name = o->case_name;
    if (!o->variant.empty()) filter.variant = o->variant;
    if (!o->status.empty()) filter.status = status_from_string(o->status);
    if (o->limit > 0) filter.limit = o->limit;
    const auto runs = db.runs(filter);
    // What is shown of them, a batch of runs per statement.
    std::vector<std::string> ids;
    for (const auto& r : runs) ids.push_back(r.run_id);
    auto metrics_of = db.metrics_of(ids);
    const auto step_counts = o->json ? db.step_counts(ids) : std::map<std::string, int64_t>{};
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    if (!o->json)  // the group is what `report pair|nway --group` takes
      std::cout << fmt::format("{:<36}  {:<36}  {:<20} {:<10} {:<11} {:<24}  {}\n", "RUN", "GROUP", "CASE", "VARIANT",
                               "STATUS", "STARTED", "REASON");
    for (const auto& r : runs) {
      const auto& metrics = metrics_of[r.run_id];
      auto metric = [&](const char* name) -> nlohmann::json {
        const auto it = metrics.find(name);
        return it != metrics.end() && it->second ? nlohmann::json(*it->second) : nlohmann::json(nullptr);
      };
      if (o->json) {
        nlohmann::ordered_json j;
        j["run_id"] = r.run_id;
        j["group_id"] = r.group_id;
        j["case"] = r.case_name;
        j["variant"] = r.variant;
        j["repeat"] = r.repeat_index;
        j["status"] = std::string(to_string(r.status));
        j["reason"] = r.reason;
        j["started_at"] = r.started_at;
        j["git_commit"] = r.git_commit;
        j["git_branch"] = r.git_branch;
        const auto count = step_counts.find(r.run_id);
        j["steps"] = count == step_counts.end() ? 0 : count->second;
        j["final_loss"] = metric("final_loss");
        j["step_time_mean_s"] = metric("step_time_mean_s");
        list.push_back(j);
      } else {
        std::cout << fmt::format("{:<36}  {:<36}  {:<20} {:<10} {:<11} {:<24}  {}\n", r.run_id, r.group_id, r.case_name,
                                 r.variant, to_string(r.status), r.started_at, r.reason);
      }
    }
    if (o->json) std::cout << list.dump(2) << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
