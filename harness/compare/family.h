// The false-alarm family of one analysis (docs/verdicts.md, "one false-alarm
// rate per comparison, not per metric"): every timing test an analysis makes —
// each comparison's timing metrics, over all its comparisons (cases x
// implementations against the reference x hardware) and every sequential look
// at the same runs — shares the rate 1 - confidence (Bonferroni). This is the
// one place that turns those counts into the confidence of each interval; the
// pair, branch, nway and console analyses, `ab`, the adaptive matrix and
// bisect's sessions all ask it.
#pragma once

#include <cstddef>

#include "harness/stats/interval.h"

namespace twinbench::compare {

struct Family {
  double confidence = stats::kDefaultFamilyConfidence;  // of the whole analysis: 1 - alpha
  size_t comparisons = 1;  // comparisons judged together (each contributes its timing tests)
  size_t looks = 1;        // looks a sequential procedure took (or allowed itself) at the same runs

  // comparisons x the timing tests (Judge::kTime metrics) of one comparison.
  size_t tests() const;
  // The confidence of each timing interval: the family's, shared out over tests() x looks.
  double per_test_confidence() const;
};

// A family of `comparisons` comparisons looked at `looks` times, holding `confidence`
// over all of them (zero counts are taken as one).
Family family_of(double confidence, size_t comparisons, size_t looks = 1);

// The timing tests one comparison contributes to its family.
size_t timing_tests_per_comparison();

}  // namespace twinbench::compare
