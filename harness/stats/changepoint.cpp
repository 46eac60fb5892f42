// Change points of a nightly series: the rank split test with Worsley's bound,
// binary segmentation, levels and intervals, incremental updates (see
// changepoint.h for the method and why).
#include "harness/stats/changepoint.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/stats/interval.h"
#include "harness/stats/summary.h"

namespace twinbench::stats {
namespace {

constexpr double kPiChangePoint = 3.14159265358979323846;

void check_change_point_options(const ChangePointOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 1)) throw std::invalid_argument("change points: alpha must be in (0, 1)");
  if (o.min_segment < 2) throw std::invalid_argument("change points: min_segment must be >= 2");
  if (!(o.min_relative_change >= 0))
    throw std::invalid_argument("change points: min_relative_change must be >= 0");
  if (!(o.confidence > 0 && o.confidence < 1)) throw std::invalid_argument("change points: confidence must be in (0, 1)");
}

void check_nights(const std::vector<double>& nights, size_t from = 0) {
  for (size_t i = from; i < nights.size(); ++i)
    if (!std::isfinite(nights[i]))
      throw std::invalid_argument("change points: night " + std::to_string(i) + " is not a finite number");
}

// The van der Waerden normal scores of values[0, n): Phi^-1(rank / (n + 1)),
// a tie group getting the mean of its members' scores, centred on their mean.
std::vector<double> normal_scores(const double* values, size_t n) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return values[i] < values[j]; });
  std::vector<double> scores(n);
  const double denominator = static_cast<double>(n) + 1;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && values[order[j]] == values[order[i]]) ++j;
    double sum = 0;
    for (size_t k = i; k < j; ++k) sum += normal_quantile(static_cast<double>(k + 1) / denominator);
    for (size_t k = i; k < j; ++k) scores[order[k]] = sum / static_cast<double>(j - i);
    i = j;
  }
  const double centre = mean(scores);  // 0 without ties, by symmetry; not exactly with them
  for (double& x : scores) x -= centre;
  return scores;
}

// Sum of |x - median| over values[0, n).
double absolute_deviation(const double* values, size_t n) {
  std::vector<double> v(values, values + n);
  const double mid = median(v);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::fabs(values[i] - mid);
  return sum;
}

// Where a significant segment values[0, n) changes: the split within
// min_segment nights of the rank statistic's maximum k0 with the least absolute
// deviation from the two sides' medians (ties: the nearest to k0). The rank
// statistic sees only order, so with a clear step it can be a night or two off
// (a value just above the step still counts as low in ranks centred on the whole
// segment); the medians' cost sees the levels and does not follow outlier nights.
size_t locate(const double* values, size_t n, size_t k0, size_t min_segment) {
  const size_t lo = std::max(min_segment, k0 > min_segment ? k0 - min_segment : 0);
  const size_t hi = std::min(n - min_segment, k0 + min_segment);
  size_t best = k0;
  double best_cost = absolute_deviation(values, k0) + absolute_deviation(values + k0, n - k0);
  for (size_t k = lo; k <= hi; ++k) {
    const double cost = absolute_deviation(values, k) + absolute_deviation(values + k, n - k);
    const size_t distance = k > k0 ? k - k0 : k0 - k, best_distance = best > k0 ? best - k0 : k0 - best;
    if (cost < best_cost || (cost == best_cost && distance < best_distance)) {
      best = k;
      best_cost = cost;
    }
  }
  return best;
}

// Binary segmentation of nights[begin, end): every significant split, each
// segment tested once.
void segment(const std::vector<double>& nights, size_t begin, size_t end, const ChangePointOptions& o,
             ChangePoints& out) {
  std::vector<std::pair<size_t, size_t>> pending = {{begin, end}};
  while (!pending.empty()) {
    const auto [b, e] = pending.back();
    pending.pop_back();
    const auto split = best_split(nights.data() + b, e - b, o.min_segment);
    if (e - b >= 2 * o.min_segment) {
      ++out.segments_tested;
      out.candidates_tested += e - b - 2 * o.min_segment + 1;
    }
    if (!split || split->p_value > o.alpha) continue;
    ChangePoint cp;
    cp.index = b + locate(nights.data() + b, e - b, split->index, o.min_segment);
    // At the newest nights a step of which fewer than min_segment nights exist
    // already shows, but only as far as the last candidate, min_segment nights
    // before the end: the step may lie later. Wait for the nights that say where.
    const size_t last_candidate = e - o.min_segment;
    if (e == nights.size() && (b + split->index == last_candidate || cp.index == last_candidate)) continue;
    cp.p_value = split->p_value;
    out.points.push_back(cp);
    pending.emplace_back(b, cp.index);
    pending.emplace_back(cp.index, e);
  }
  std::sort(out.points.begin(), out.points.end(),
            [](const ChangePoint& x, const ChangePoint& y) { return x.index < y.index; });
}

// Levels and interval of point k from the segments between its neighbours.
void describe(const std::vector<double>& nights, std::vector<ChangePoint>& points, size_t k, double confidence) {
  ChangePoint& cp = points[k];
  const size_t begin = k == 0 ? 0 : points[k - 1].index;
  const size_t end = k + 1 == points.size() ? nights.size() : points[k + 1].index;
  const std::vector<double> left(nights.begin() + static_cast<std::ptrdiff_t>(begin),
                                 nights.begin() + static_cast<std::ptrdiff_t>(cp.index));
  const std::vector<double> right(nights.begin() + static_cast<std::ptrdiff_t>(cp.index),
                                  nights.begin() + static_cast<std::ptrdiff_t>(end));
  cp.nights_before = left.size();
  cp.nights_after = right.size();
  cp.before = median(left);
  cp.after = median(right);
  const RatioEstimate e = estimate_unpaired(left, right, confidence);
  cp.change = e.ratio - 1;
  cp.change_low = e.interval ? e.interval->low - 1 : kNaN;
  cp.change_high = e.interval ? e.interval->high - 1 : kNaN;
}

// Levels and intervals of every point, then the practical size: while some
// point changes less than min_relative_change, drop the smallest and describe
// its neighbours again (their segments merged).
void describe_all(const std::vector<double>& nights, std::vector<ChangePoint>& points, const ChangePointOptions& o) {
  for (size_t k = 0; k < points.size(); ++k) describe(nights, points, k, o.confidence);
  if (o.min_relative_change <= 0) return;
  while (!points.empty()) {
    size_t smallest = 0;
    for (size_t k = 1; k < points.size(); ++k)
      if (!(std::fabs(points[k].change) >= std::fabs(points[smallest].change))) smallest = k;
    if (std::fabs(points[smallest].change) >= o.min_relative_change) return;  // NaN changes are dropped too
    points.erase(points.begin() + static_cast<std::ptrdiff_t>(smallest));
    if (smallest > 0) describe(nights, points, smallest - 1, o.confidence);
    if (smallest < points.size()) describe(nights, points, smallest, o.confidence);
  }
}

}  // namespace

double max_statistic_p_value(double statistic, size_t n, size_t min_segment) {
  if (min_segment < 1 || n < 2 * min_segment || n < 4) return 1;
  if (!(statistic > 0)) return 1;
  const auto nd = static_cast<double>(n);
  // Z_k = sqrt(n - 1) <u, e_k>: u the centred scores scaled to length 1, e_k
  // the unit contrast of split k. Under random order (and exactly for Gaussian
  // values) u is uniform on the unit sphere of the n - 1 dimensions orthogonal
  // to the constant, so with r = b / sqrt(n - 1):
  const double r = statistic / std::sqrt(nd - 1);
  if (r >= 1) return 0;  // beyond what any order of these values reaches
  // P(<u, e> >= r): a t with n - 2 degrees of freedom.
  double upper = 1 - student_t_cdf(r * std::sqrt(nd - 2) / std::sqrt(1 - r * r), nd - 2);
  // P(<u, e_{k-1}> < r <= <u, e_k>) for contrasts at angle theta: in their
  // plane u is R (cos phi, sin phi) with phi uniform and R^2 ~ Beta(1, e),
  // e = (n - 3) / 2, and given R > r the event is an arc of min(theta,
  // 2 acos(r / R)). Writing R = r / cos(psi):
  //   theta / (2 pi) P(R >= r / cos(theta / 2))
  //   + int_0^{min(theta / 2, acos r)} psi / pi * density of R^2 at r^2 / cos^2 psi * d(r^2 / cos^2 psi).
  const double e = (nd - 3) / 2, r2 = r * r, psi_max = std::acos(r);
  // 16-point Gauss-Legendre on [0, 1] (the integrand is smooth in psi).
  static constexpr double kNodes[8] = {0.0950125098376374, 0.2816035507792589, 0.4580167776572274,
                                       0.6178762444026438, 0.7554044083550030, 0.8656312023878318,
                                       0.9445750230732326, 0.9894009349916499};
  static constexpr double kWeights[8] = {0.1894506104550685, 0.1826034150449236, 0.1691565193950025,
                                         0.1495959888165767, 0.1246289712555339, 0.0951585116824928,
                                         0.0622535239386479, 0.0271524594117541};
  for (size_t k = min_segment + 1; k + min_segment <= n; ++k) {
    const auto kd = static_cast<double>(k);
    // Neighbouring contrasts: 1 - rho^2 = n / (k (n - k + 1)) exactly.
    const double one_minus_rho2 = nd / (kd * (nd - kd + 1));
    const double theta = std::atan2(std::sqrt(one_minus_rho2), std::sqrt(1 - one_minus_rho2));
    double crossing = 0;
    if (theta / 2 < psi_max) {
      const double c = std::cos(theta / 2);
      crossing = theta / (2 * kPiChangePoint) * std::pow(1 - r2 / (c * c), e);
    }
    const double hi = std::min(theta / 2, psi_max);
    double integral = 0;
    for (int side = -1; side <= 1; side += 2)
      for (int i = 0; i < 8; ++i) {
        const double psi = hi * (0.5 + 0.5 * side * kNodes[i]);
        const double cp = std::cos(psi), s = r2 / (cp * cp);
        // d s / d psi = 2 r^2 tan(psi) / cos^2(psi); density of Beta(1, e): e (1 - s)^(e - 1).
        const double ds = 2 * r2 * std::tan(psi) / (cp * cp);
        integral += 0.5 * kWeights[i] * psi / kPiChangePoint * e * std::pow(1 - s, e - 1) * ds;
      }
    upper += crossing + hi * integral;
    if (upper >= 0.5) return 1;
  }
  return std::min(1.0, 2 * upper);  // two-sided: the maximum of Z or of -Z
}

std::optional<BestSplit> best_split(const double* values, size_t n, size_t min_segment) {
  if (min_segment < 1 || n < 2 * min_segment) return std::nullopt;
  // Every value equal (a deterministic metric between two changes): nothing to
  // split, and the scores' rounding residue must not pass for a difference.
  if (std::all_of(values, values + n, [&](double x) { return x == values[0]; })) return std::nullopt;
  const std::vector<double> c = normal_scores(values, n);
  double sum_c2 = 0;
  for (double x : c) sum_c2 += x * x;
  const auto nd = static_cast<double>(n);
  // Var(W_k) for the score sum W_k of the first k under random order:
  // k (n - k) / (n (n - 1)) * sum c^2 (sampling without replacement).
  const double scale = sum_c2 / (nd * (nd - 1));
  BestSplit best;
  best.candidates = n - 2 * min_segment + 1;
  double w = 0;
  for (size_t k = 1; k + min_segment <= n; ++k) {
    w += c[k - 1];
    if (k < min_segment) continue;
    const auto kd = static_cast<double>(k);
    const double z = std::fabs(w) / std::sqrt(kd * (nd - kd) * scale);
    if (z > best.statistic) {
      best.statistic = z;
      best.index = k;
    }
  }
  if (best.index == 0) return std::nullopt;  // no candidate differs at all
  best.p_value = max_statistic_p_value(best.statistic, n, min_segment);
  return best;
}

ChangePoints detect_change_points(const std::vector<double>& nights, const ChangePointOptions& options) {
  check_change_point_options(options);
  check_nights(nights);
  ChangePoints out;
  out.nights = nights.size();
  segment(nights, 0, nights.size(), options, out);
  describe_all(nights, out.points, options);
  return out;
}

ChangePoints update_change_points(const std::vector<double>& nights, const ChangePoints& previous,
                                  const ChangePointOptions& options) {
  check_change_point_options(options);
  if (nights.size() < previous.nights)
    throw std::invalid_argument("change points: " + std::to_string(nights.size()) + " nights, fewer than the " +
                                std::to_string(previous.nights) + " analysed before");
  // Only the new nights can be unchecked; the old ones were checked when analysed.
  check_nights(nights, previous.nights);
  ChangePoints out;
  out.nights = nights.size();
  out.points = previous.points;
  const size_t last = out.points.empty() ? 0 : out.points.back().index;
  segment(nights, last, nights.size(), options, out);
  describe_all(nights, out.points, options);
  return out;
}

}  // namespace twinbench::stats
