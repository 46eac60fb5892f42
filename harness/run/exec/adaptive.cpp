// The adaptive matrix (see adaptive.h).
#include "harness/run/exec/adaptive.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <ostream>
#include <random>
#include <stdexcept>

#include "harness/base/interrupt.h"
#include "harness/compare/family.h"
#include "harness/metrics/catalogue.h"
#include "harness/run/runner.h"
#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"

namespace twinbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The case's step-time threshold: its [thresholds] on top of the catalogue's.
double step_time_threshold(const RunConfig& config) {
  for (const auto& m : metrics::with_thresholds(metrics::shown_in(metrics::kVerdict), config.thresholds))
    if (m.name == "step_time_median_s") return std::min(m.rel_threshold, 0.999999);
  return stats::kDefaultThreshold;
}

double median_step_time(const RunOutcome& r) {
  return r.metrics && r.metrics->step_time.count > 0 ? r.metrics->step_time.median : stats::kNaN;
}

}  // namespace

AdaptiveResult run_adaptive(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                            RunnerOptions options, const AdaptiveOptions& a, std::ostream& log) {
  if (variants.size() < 2) throw std::invalid_argument("--adaptive needs at least two implementations to pair");
  if (a.reference >= variants.size()) throw std::invalid_argument("adaptive: reference out of range");
  if (a.max_pairs < 2) throw std::invalid_argument(fmt::format("--max-pairs {} is too few: at least 2", a.max_pairs));
  if (!(a.budget_s > 0)) throw std::invalid_argument(fmt::format("--budget {} must be positive", a.budget_s));
  if (!(a.alpha > 0 && a.alpha < 0.5)) throw std::invalid_argument(fmt::format("alpha {} must be in (0, 0.5)", a.alpha));

  AdaptiveResult res;
  const stats::SequentialPlan plan = stats::default_plan(a.max_pairs);
  res.looks = plan.looks.size();
  // One family: every case of every implementation against the reference, at every look.
  res.confidence = compare::family_of(1 - a.alpha, configs.size() * (variants.size() - 1), res.looks)
                       .per_test_confidence();
  options.sequential_looks = static_cast<int>(res.looks);
  std::mt19937_64 order(a.seed != 0 ? a.seed : static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  const auto start = Clock::now();

  for (size_t ci = 0; ci < configs.size(); ++ci) {
    const RunConfig& config = configs[ci];
    // What is left of the budget, shared by the cases not yet run: a case that
    // decides early (or is skipped) leaves its time to the ones after it.
    const double share = std::max(1e-3, (a.budget_s - seconds_since(start)) / static_cast<double>(configs.size() - ci));
    stats::Sequential looks(plan, share, /*min_pairs=*/2);
    const double threshold = step_time_threshold(config);
    CasePairs progress;
    progress.case_name = case_label(config);
    std::vector<std::vector<stats::RunPair>> pairs(variants.size());  // per implementation vs the reference
    const auto case_start = Clock::now();
    std::vector<size_t> round(variants.size());
    std::iota(round.begin(), round.end(), 0);
    for (size_t p = 0; p < looks.max_pairs(); ++p) {
      std::shuffle(round.begin(), round.end(), order);  // A B or B A at random: drift cannot favour one side
      std::vector<double> times(variants.size(), stats::kNaN);
      std::string not_completed;
      for (const size_t v : round) {
        if (stop_requested()) break;
        res.outcomes.push_back(run_one(config, variants[v], static_cast<int>(p), options));
        const RunOutcome& r = res.outcomes.back();
        times[v] = median_step_time(r);
        if (r.status != RunStatus::completed && not_completed.empty())
          not_completed = fmt::format("{} {}{}", variants[v], to_string(r.status), r.reason.empty() ? "" : ": " + r.reason);
      }
      if (stop_requested()) {
        progress.stopped_because = "interrupted";
        break;
      }
      progress.pairs = p + 1;
      if (!not_completed.empty()) {
        progress.stopped_because = not_completed;
        break;
      }
      for (size_t v = 0; v < variants.size(); ++v)
        if (v != a.reference) pairs[v].push_back({times[a.reference], times[v]});
      if (!looks.look_now(p + 1, seconds_since(case_start))) continue;
      // The case is decisive when every implementation's step-time verdict is.
      bool all_decisive = true;
      // Futile when every undecided implementation is (stats::futile): its time
      // then goes to the cases left.
      bool futile = true;
      size_t futile_need = 0;
      std::string worst_verdict, worst_change;
      int worst = -1;
      for (size_t v = 0; v < variants.size(); ++v) {
        if (v == a.reference) continue;
        const auto e = stats::estimate_paired(pairs[v], res.confidence);
        const auto outcome = stats::decide(e, threshold, /*higher_is_better=*/false);
        all_decisive = all_decisive && stats::should_stop(outcome);
        if (!stats::should_stop(outcome)) {
          futile = futile && stats::futile(e, threshold, looks.max_pairs());
          const auto need = stats::runs_to_decide(e, threshold);
          futile_need = std::max(futile_need, need ? *need : std::numeric_limits<size_t>::max());
        }
        const int rank = outcome == stats::Outcome::kInconclusive ? 3 : outcome == stats::Outcome::kRegressed ? 2
                         : outcome == stats::Outcome::kImproved    ? 1 : 0;
        if (rank > worst) {
          worst = rank;
          worst_verdict = stats::to_string(outcome);
          worst_change = stats::format_change(e);
        }
        log << fmt::format("matrix: {} look {}/{} after {} pairs: {} vs {} step time {} -> {}\n", progress.case_name,
                           looks.looks_taken() + 1, looks.planned_looks(), p + 1, variants[v], variants[a.reference],
                           stats::format_change(e), stats::to_string(outcome));
      }
      progress.verdict = worst_verdict;
      progress.change = worst_change;
      progress.decisive = all_decisive;
      const auto stop = looks.after_look(all_decisive ? stats::Outcome::kNoChange : stats::Outcome::kInconclusive);
      if (stop == stats::Sequential::Stop::kGoOn && !all_decisive && futile) {
        progress.stopped_because =
            futile_need == std::numeric_limits<size_t>::max()
                ? fmt::format("futile after {} pairs: the change sits on the threshold, no number of pairs decides it", p + 1)
                : futile_need > 1000
                ? fmt::format("futile after {} pairs: more than 1000 pairs would decide it, the maximum is {}", p + 1,
                              looks.max_pairs())
                : fmt::format("futile after {} pairs: about {} pairs would decide it, the maximum is {}", p + 1, futile_need,
                              looks.max_pairs());
        break;
      }
      if (stop == stats::Sequential::Stop::kGoOn) continue;
      progress.stopped_because =
          stop == stats::Sequential::Stop::kDecisive ? fmt::format("decisive after {} pairs", p + 1)
          : stop == stats::Sequential::Stop::kBudget ? fmt::format("budget share of {:.0f} s spent after {} pairs", share, p + 1)
                                                      : fmt::format("maximum of {} pairs", p + 1);
      break;
    }
    progress.seconds = seconds_since(case_start);
    res.cases.push_back(progress);
    if (stop_requested()) break;
  }
  res.seconds = seconds_since(start);
  return res;
}

}  // namespace twinbench
