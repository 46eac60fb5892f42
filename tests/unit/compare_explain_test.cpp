// The why of a verdict (compare/explain_analysis.h) on synthetic profiled
// runs whose cause is known: a planted op slowdown ranks that op first with
// its share of the change and an interval holding the planted size; ops on one
// side only are named so; time outside every op is the remainder, not spread
// over ops; A/A pairs give no significant op; the memory why names the site
// and tensor of a planted allocation and its bytes, and what the entries do
// not hold is shown as unexplained.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/explain_analysis.h"
#include "harness/compare/profile_record.h"

namespace twinbench::compare {
namespace {

constexpr const char* kFwd = "twinbench::forward";
constexpr const char* kBwd = "twinbench::backward";

// Mean self seconds per step of one op in a run; the step adds `glue` outside every op.
struct PlantedOp {
  std::string phase, op;
  double seconds;
};

// Op times vary by `noise` (relative sd), the glue by 0.2 ms (sd).
RunView profiled(const std::vector<PlantedOp>& ops, double glue, int repeat, std::mt19937& rng, double noise) {
  std::normal_distribution<double> relative(0.0, noise), absolute(0.0, 0.0002);
  RunProfile p;
  p.steps = 20;
  double step = glue + absolute(rng);
  for (const auto& o : ops) {
    const double s = o.seconds * (1 + relative(rng));
    p.ops.push_back({o.phase, o.op, s, 1});
    step += s;
  }
  p.step_seconds = step;
  RunView v;
  v.run.status = RunStatus::completed;
  v.run.repeat_index = repeat;
  v.run.provenance_json = R"({"run_role":"profile"})";
  for (const auto& [name, value] : profile_rows(p)) v.metrics[name] = value;
  return v;
}

std::vector<const RunView*> ptrs(const std::vector<RunView>& v) {
  std::vector<const RunView*> out;
  for (const auto& r : v) out.push_back(&r);
  return out;
}

const std::vector<PlantedOp> kBase = {{kFwd, "aten::mm", 0.010},       {kBwd, "aten::mm", 0.020},
                                      {kFwd, "aten::add", 0.002},      {kBwd, "aten::mul", 0.003},
                                      {"twinbench::optimizer", "aten::add_", 0.004}};

std::vector<PlantedOp> slowed(std::vector<PlantedOp> ops, const std::string& phase, const std::string& op, double by) {
  for (auto& o : ops)
    if (o.phase == phase && o.op == op) o.seconds *= 1 + by;
  return ops;
}

struct Sides {
  std::vector<RunView> a, b;
};

Sides make(const std::vector<PlantedOp>& a_ops, double a_glue, const std::vector<PlantedOp>& b_ops, double b_glue,
           int runs, unsigned seed, double noise = 0.01) {
  std::mt19937 rng(seed);
  Sides s;
  for (int k = 0; k < runs; ++k) {
    s.a.push_back(profiled(a_ops, a_glue, k, rng, noise));
    s.b.push_back(profiled(b_ops, b_glue, k, rng, noise));
  }
  return s;
}

const Contribution* find_op(const TimeWhy& w, const std::string& phase, const std::string& op) {
  for (const auto& c : w.ops)
    if (c.phase == phase && c.name == op) return &c;
  return nullptr;
}

TEST(ExplainTime, PlantedOpRankedFirstWithItsShareAndInterval) {
  // aten::mm in backward 15% slower on B: +3 ms of a ~40 ms step.
  const auto s = make(kBase, 0.001, slowed(kBase, kBwd, "aten::mm", 0.15), 0.001, 6, 7);
  const Explanation e = explain(Comparison{}, ptrs(s.a), ptrs(s.b));
  ASSERT_TRUE(e.time);
  const TimeWhy& w = *e.time;
  EXPECT_EQ(w.pairs, 6u);  // same repeat indexes: paired
  ASSERT_FALSE(w.ops.empty());
  EXPECT_EQ(w.ops.front().name, "aten::mm");
  EXPECT_EQ(w.ops.front().phase, "backward");
  EXPECT_TRUE(w.ops.front().significant);
  ASSERT_TRUE(w.ops.front().low && w.ops.front().high);
  EXPECT_LT(*w.ops.front().low, 0.003);
  EXPECT_GT(*w.ops.front().high, 0.003);
  EXPECT_GT(w.ops.front().share, 0.8);
  EXPECT_LT(w.ops.front().share, 1.2);
  EXPECT_EQ(w.headline.rfind("from aten::mm in backward"), w.headline.size() - std::string("from aten::mm in backward").size())
      << w.headline;
  // The intervals are split over the family: every tested op, category, phase and the step.
  EXPECT_GT(w.tests, w.ops.size());
  EXPECT_NEAR(w.confidence, 1 - 0.05 / static_cast<double>(w.tests), 1e-12);
  // The same op in forward is not the cause.
  const Contribution* fwd = find_op(w, "forward", "aten::mm");
  ASSERT_NE(fwd, nullptr);
  EXPECT_LT(std::abs(fwd->share), 0.2);
  // Phases: backward holds the change.
  ASSERT_FALSE(w.phases.empty());
  bool backward_first = false;
  for (const auto& p : w.phases)
    if (p.name == "backward") backward_first = p.share > 0.8;
  EXPECT_TRUE(backward_first);
}

TEST(ExplainTime, AnImprovementRanksTheFasterOpFirst) {
  const auto s = make(kBase, 0.001, slowed(kBase, kFwd, "aten::mm", -0.2), 0.001, 6, 11);
  const Explanation e = explain(Comparison{}, ptrs(s.a), ptrs(s.b));
  ASSERT_TRUE(e.time);
  EXPECT_LT(e.time->step.change, 0);
  EXPECT_EQ(op_label(e.time->ops.front().phase, e.time->ops.front().name), "aten::mm in forward");
  EXPECT_GT(e.time->ops.front().share, 0.8);  // a share of a fall, in the fall's direction
}

TEST(ExplainTime, OpsOnOneSideOnlyAreNamedSo) {
  auto b_ops = kBase;
  b_ops.push_back({kBwd, "aten::clone", 0.004});  // B copies; A does not
  auto a_ops = kBase;
  a_ops.push_back({kFwd, "aten::t", 0.0005});  // A transposes; B does not
  const auto s = make(a_ops, 0.001, b_ops, 0.001, 5, 3);
  const Explanation e = explain(Comparison{}, ptrs(s.a), ptrs(s.b));
  ASSERT_TRUE(e.time);
  EXPECT_EQ(e.time->ops.front().name, "aten::clone");
  EXPECT_EQ(e.time->ops.front().where, "only B");
  EXPECT_NEAR(e.time->ops.front().a, 0.0, 1e-15);
  const Contribution* t = find_op(*e.time, "forward", "aten::t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->where, "only A");
  EXPECT_LT(t->change, 0);
  EXPECT_NE(e.time->headline.find("(only B)"), std::string::npos) << e.time->headline;
}

TEST(ExplainTime, TimeOutsideEveryOpIsTheRemainderNotAnOp) {
  // B's step is 2 ms longer outside every op (trainer glue, a wait).
  const auto s = make(kBase, 0.001, kBase, 0.003, 6, 5);
  const Explanation e = explain(Comparison{}, ptrs(s.a), ptrs(s.b));
  ASSERT_TRUE(e.time);
  const TimeWhy& w = *e.time;
  EXPECT_NEAR(w.remainder.change, 0.002, 0.0007);
  EXPECT_TRUE(w.remainder.significant);
  EXPECT_GT(w.remainder.share, 0.7);
  for (const auto& c : w.ops) EXPECT_FALSE(c.significant) << op_label(c.phase, c.name);
  ASSERT_FALSE(w.phases.empty());
  EXPECT_EQ(w.phases.back().name, "outside ops");  // shown with the phases, last
  // Op changes and the remainder add up to the step's change.
  double sum = w.remainder.change;
  for (const auto& c : w.ops) sum += c.change;
  EXPECT_NEAR(sum, w.step.change, 1e-12);
}

TEST(ExplainTime, AaPairsGiveNoSignificantOp) {
  // Twenty A/A explanations at the family's 95%: an op called significant in
  // more than two of them would be a false-alarm rate far above 5%.
  int with_false_alarm = 0, with_shares = 0, tested = 0;
  for (unsigned seed = 100; seed < 120; ++seed) {
    const auto s = make(kBase, 0.001, kBase, 0.001, 5, seed, 0.03);
    const Explanation e = explain(Comparison{}, ptrs(s.a), ptrs(s.b));
    ASSERT_TRUE(e.time);
    bool any = false;
    for (const auto& c : e.time->ops) {
      any = any || c.significant;
      tested += c.tested ? 1 : 0;
    }
    with_false_alarm += any ? 1 : 0;
    with_shares += std::isfinite(e.time->ops.front().share) ? 1 : 0;
  }
  EXPECT_LE(with_false_alarm, 2);
  // Ops were tested in every explanation: none significant is a finding, not an empty family.
  EXPECT_GE(tested, 20);
  // A share of a step change whose interval holds zero means nothing: NaN.
  EXPECT_LE(with_shares, 3);
}

TEST(ExplainTime, UnpairedRunsUseWelchAndSmallOpsAreNotTested) {
  auto s = make(kBase, 0.001, slowed(kBase, kBwd, "aten::mul", 0.5), 0.001, 5, 9);
  for (auto& r : s.b) r.run.repeat_index += 10;  // no shared repeat: made apart
  const Explanation e = explain(Comparison{}, ptrs(s.a), ptrs(s.b));
  ASSERT_TRUE(e.time);
  EXPECT_EQ(e.time->pairs, 0u);
  EXPECT_EQ(e.time->ops.front().name, "aten::mul");
  EXPECT_TRUE(e.time->ops.front().low.has_value());
  // An op under min_share_tested of the step has no interval and is never significant.
  auto a_ops = kBase, b_ops = kBase;
  a_ops.push_back({kFwd, "aten::view", 0.00001});
  b_ops.push_back({kFwd, "aten::view", 0.00002});
  const auto t = make(a_ops, 0.001, b_ops, 0.001, 5, 13);
  const Explanation f = explain(Comparison{}, ptrs(t.a), ptrs(t.b));
  const Contribution* view = find_op(*f.time, "forward", "aten::view");
  ASSERT_NE(view, nullptr);
  EXPECT_FALSE(view->tested);
  EXPECT_FALSE(view->low.has_value());
  EXPECT_FALSE(view->significant);
}

TEST(ExplainTime, NoProfiledRunsSaySo) {
  Comparison c;
  c.label_a = "functional";
  c.label_b = "module";
  const auto s = make(kBase, 0.001, kBase, 0.001, 2, 1);
  const Explanation none = explain(c, {}, {});
  EXPECT_FALSE(none.time);
  EXPECT_NE(none.note.find("no profiled run of either side"), std::string::npos) << none.note;
  const Explanation one = explain(c, ptrs(s.a), {});
  EXPECT_NE(one.note.find("no profiled run of module"), std::string::npos) << one.note;
}

// ---- memory -------------------------------------------------------------------

RunView with_memory(const std::vector<LiveAtPeak>& live, int64_t extra_peak, int repeat) {
  RunProfile p;
  p.steps = 2;
  p.step_seconds = 0.01;
  p.ops.push_back({kFwd, "aten::mm", 0.005, 1});
  int64_t sum = 0;
  for (const auto& l : live) sum += l.bytes;
  p.peak_bytes = sum + extra_peak;
  p.peak_phase = kBwd;
  p.peak_ops = "aten::mm";
  p.live_at_peak = live;
  RunView v;
  v.run.status = RunStatus::completed;
  v.run.repeat_index = repeat;
  for (const auto& [name, value] : profile_rows(p)) v.metrics[name] = value;
  return v;
}

TEST(ExplainMemory, PlantedAllocationNamedWithItsBytes) {
  constexpr int64_t kMiB = 1 << 20;
  const std::vector<LiveAtPeak> base = {
      {kBwd, "torch::autograd::AccumulateGrad > aten::clone", "decoder.w (gradient)", 8 * kMiB},
      {kFwd, "aten::mm", "", 3 * kMiB},
      {"", "", "decoder.w", 8 * kMiB}};
  auto planted = base;
  planted.push_back({kFwd, "aten::gelu", "", 5 * kMiB});  // the planted extra allocation
  // The gradient: the same bytes, allocated by B's matmul instead of A's AccumulateGrad.
  planted[0].ops = "aten::mm";
  const std::vector<RunView> a = {with_memory(base, 0, 0), with_memory(base, 0, 1)};
  const std::vector<RunView> b = {with_memory(planted, 4096, 0), with_memory(planted, 4096, 1)};
  const Explanation e = explain(Comparison{}, ptrs(a), ptrs(b));
  ASSERT_TRUE(e.memory);
  const MemoryWhy& m = *e.memory;
  EXPECT_EQ(m.peak_b - m.peak_a, 5 * kMiB + 4096);
  ASSERT_FALSE(m.entries.empty());
  EXPECT_EQ(m.entries.front().ops, "aten::gelu");
  EXPECT_EQ(m.entries.front().phase, "forward");
  EXPECT_EQ(m.entries.front().diff, 5 * kMiB);
  EXPECT_EQ(m.entries.front().where, "only B");
  // The gradient moved sites but not bytes: no entry of it (named tensors match by name).
  for (const auto& x : m.entries) EXPECT_NE(x.tensor, "decoder.w (gradient)");
  // By site alone, it shows as moved: one site down 8 MiB, another up.
  bool moved = false;
  for (const auto& x : m.by_site) moved = moved || (x.ops == "torch::autograd::AccumulateGrad > aten::clone" && x.diff == -8 * kMiB);
  EXPECT_TRUE(moved);
  EXPECT_EQ(m.unexplained, 4096);  // the peak's bytes no live block holds: shown, not hidden
  EXPECT_NE(m.headline.find("+5.0 MiB at the peak"), std::string::npos) << m.headline;
  EXPECT_NE(m.headline.find("aten::gelu in forward"), std::string::npos) << m.headline;
  EXPECT_EQ(m.peak_at_b, "aten::mm in backward");
}

TEST(ExplainMemory, SamePeaksGiveNoEntries) {
  const std::vector<LiveAtPeak> base = {{kFwd, "aten::mm", "", 1000}};
  const std::vector<RunView> a = {with_memory(base, 0, 0)}, b = {with_memory(base, 0, 0)};
  const Explanation e = explain(Comparison{}, ptrs(a), ptrs(b));
  ASSERT_TRUE(e.memory);
  EXPECT_TRUE(e.memory->entries.empty());
  EXPECT_EQ(e.memory->unexplained, 0);
  EXPECT_NE(e.memory->headline.find("the same blocks on both sides"), std::string::npos);
  EXPECT_NE(e.note.find("One profiled run a side"), std::string::npos) << e.note;
}

TEST(ExplainFormat, BytesAndLabels) {
  EXPECT_EQ(format_bytes(16 << 20), "16.0 MiB");
  EXPECT_EQ(format_bytes(-512 * 1024, true), "-512.0 KiB");
  EXPECT_EQ(format_bytes(3, true), "+3 B");
  EXPECT_EQ(op_label("backward", "aten::mm"), "aten::mm in backward");
  EXPECT_EQ(op_label("", "aten::mm"), "aten::mm");
}

}  // namespace
}  // namespace twinbench::compare
