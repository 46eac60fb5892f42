// The one sequential look (docs/verdicts.md §5, §11): interleaved pairs are
// added, and at the plan's pair counts a test looks at them — the interval at
// the level the look may spend, the decision, whether to stop, what would
// decide it. `ab` (and through it the branch gate and bisect's probes) and
// the adaptive matrix look through SequentialTest; every analysis of their
// runs later judges them through the same LookSchedule, read from the runs'
// provenance, so that a report says what the session said.
//
// The boundary is error spending (stats/sequential.h: Lan-DeMets
// O'Brien-Fleming, each look at the level it releases). A test's alpha is its
// family's share (family.h: Holm across the cases of a matrix); a look may be
// taken at a larger alpha than the one before it when other tests of the
// family were rejected meanwhile.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/run_view.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/duets.h"
#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"

namespace twinbench::compare {

// The largest confidence of any interval a look is judged at.
inline constexpr double kMaxConfidence = 1 - 1e-12;

// Which pair counts a test looks at and what each look may spend.
class LookSchedule {
 public:
  // A fixed number of runs: one look that spends the whole alpha.
  LookSchedule() = default;
  // A sequential procedure looking at `plan`'s pair counts, with error spending.
  static LookSchedule spending(stats::SequentialPlan plan);
  // Runs stored before error spending (their provenance holds sequential_looks
  // only): Bonferroni, alpha / looks at every look.
  static LookSchedule bonferroni(size_t looks);
  // What the runs' provenance records: the longest plan of any run
  // (sequential_plan), else the most looks (sequential_looks), else fixed.
  static LookSchedule of_runs(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b);

  bool sequential() const { return looks() > 1; }
  // Whether runs recorded it (of_runs found a plan or a count of looks).
  bool recorded() const { return !plan_.looks.empty() || bonferroni_looks_ > 0; }
  const stats::SequentialPlan& plan() const { return plan_; }  // empty unless spending
  size_t looks() const;                                           // planned looks; 1 when fixed
  // The alpha a look at `pairs` pairs spends of a test's `alpha` (in (0, 0.5)).
  double look_alpha(size_t pairs, double alpha) const;
  // The confidence of that look's interval: 1 - look_alpha, at most
  // kMaxConfidence (an early look of a long plan releases as little as 1e-20,
  // which a double next to 1 cannot hold; such a look decides nothing either way).
  double confidence(size_t pairs, double alpha) const;
  // For people: "O'Brien-Fleming spending over looks at 3, 4, 6, 8, 12 pairs",
  // "Bonferroni over 5 looks", "" when fixed.
  std::string describe() const;

 private:
  stats::SequentialPlan plan_;
  size_t bonferroni_looks_ = 0;
};

// The plan as the runs record it: "3,4,6,8,12" ($TWINBENCH_SEQUENTIAL_PLAN)
// and back; parse_plan of anything else is an empty plan.
std::string plan_text(const stats::SequentialPlan& plan);
stats::SequentialPlan parse_plan(const std::string& text);

// The metric a sequence of looks judges, with its threshold: the case's
// [thresholds] (`case_thresholds`), the command line's on top, the
// catalogue's default below. The one lookup of a look's threshold (`ab`, the
// adaptive matrix; the analyses read a run's through specs_for, the same
// merge). A metric that is not a timing metric: std::invalid_argument.
metrics::Metric look_metric(const std::string& name, const std::map<std::string, double>& case_thresholds,
                            const std::map<std::string, double>& cli_thresholds = {});
// The same with the case's [thresholds] as `run` stored its config (specs_for).
metrics::Metric look_metric_of_run(const std::string& name, const RunView& run,
                                   const std::map<std::string, double>& cli_thresholds);
// The relative threshold a timing verdict uses: a threshold of 100% or more
// ("never call it") is the no-change region up to 100%.
double timing_threshold(const metrics::Metric& timing_metric);

// The chance that a paired test with estimate `e` (at least 2 pairs) is
// decisive at a look after `pairs` pairs in all at `confidence`, if its
// change and noise are what `e` shows: the mean then predicted as normal
// about today's, with the spread of today's uncertainty and of the pairs to
// come; threshold relative (0.03), lower is better.
double chance_decisive(const stats::RatioEstimate& e, size_t pairs, double confidence, double threshold);

// The smallest chance of a decision by the plan's end below which a test is
// futile: its time is better spent elsewhere.
inline constexpr double kFutileChance = 0.05;
// What futility multiplies a standard deviation of `df` degrees of freedom by
// to be optimistic about the noise: sqrt(df / chi2_0.9(df)), the upper end of
// its 80% interval's reciprocal (0.69 at 3 df, 0.76 at 7).
double optimistic_sd_factor(double df);

// What one look found.
struct Look {
  size_t pairs = 0;
  double alpha = 0;       // the test's alpha when it looked (its family's share)
  double confidence = 0;  // of the interval: 1 - what this look spends of alpha
  stats::RatioEstimate estimate;
  stats::Outcome outcome = stats::Outcome::kInconclusive;
  // Undecided, and from kFutilityFloor pairs on, the chance that one of the
  // plan's later looks decides it (chance_decisive, the change itself still
  // uncertain) is below kFutileChance at every one of them.
  bool futile = false;
  // Pairs in all that would decide it at the change and noise measured, at the
  // level of the look that would: 0 when the noise is unknown (fewer than 2
  // pairs), nullopt when the change sits on the threshold or on no change.
  std::optional<size_t> pairs_to_decide;

  bool decisive() const { return stats::should_stop(outcome); }
  bool rejects_no_change() const;  // the interval leaves out no change (1)
  // For an undecided look: "about 14 pairs would decide it (the maximum is
  // 12)", "the change sits on the threshold: no number of pairs decides it",
  // "the noise is not known yet"; "" when decisive.
  std::string what_decides(size_t max_pairs) const;
};

// One test's sequence of looks at interleaved pairs: `ab` runs one, the
// adaptive matrix one per implementation and case. Pure logic: the caller runs
// the pairs and keeps the clock.
class SequentialTest {
 public:
  enum class Stop {
    kGoOn,      // not decisive yet: add pairs
    kDecisive,  // regressed, improved or no change
    kBudget,    // the next pair would overrun the budget
    kMaximum,   // the plan's last look was taken
  };

  // `metric` with its threshold (look_metric). `budget_s` in seconds (> 0);
  // the budget is not checked before `min_pairs` pairs. An empty plan or a
  // budget not positive: std::invalid_argument.
  SequentialTest(stats::SequentialPlan plan, metrics::Metric metric, double budget_s = 1e300, size_t min_pairs = 1);

  const LookSchedule& schedule() const { return schedule_; }
  const stats::SequentialPlan& plan() const { return schedule_.plan(); }
  const metrics::Metric& metric() const { return metric_; }
  size_t planned_looks() const { return schedule_.looks(); }
  size_t max_pairs() const { return schedule_.plan().max_pairs(); }
  size_t looks_taken() const { return next_look_; }
  // The plan's first look count above `pairs` (max_pairs() when none).
  size_t next_planned(size_t pairs) const;

  // The look at `pairs` (every pair so far, in order) at the test's `alpha`:
  // run-level pairs, one value a pair.
  Look look(const std::vector<stats::RunPair>& pairs, double alpha) const;
  // The look at lockstep `duets` (every duet so far, each its rounds' estimate:
  // stats/duets.h), borrowing `borrowed` between-duet noise where it fits.
  Look look(const std::vector<stats::DuetEstimate>& duets, const std::optional<stats::BetweenNoise>& borrowed,
            double alpha) const;

  // Bookkeeping of `ab`'s rounds: after `pairs` pairs that took `elapsed_s`
  // seconds in all, whether to look now — a planned pair count, or one more
  // pair (about elapsed_s / pairs seconds) would end after the budget (one last
  // look then, at the level the plan has released by then).
  bool look_now(size_t pairs, double elapsed_s);
  // After the look just taken: kDecisive, kBudget (it was the budget's last),
  // kMaximum (it was the plan's last), or kGoOn.
  Stop after_look(const Look& look);

 private:
  // A look at `n` replicates whose estimate `estimate` makes at a confidence.
  template <typename Estimate>
  Look look_at(size_t n, double alpha, Estimate estimate) const;

  LookSchedule schedule_;
  metrics::Metric metric_;
  double budget_s_;
  size_t min_pairs_;
  size_t next_look_ = 0;
  bool out_of_time_ = false;
};

}  // namespace twinbench::compare
