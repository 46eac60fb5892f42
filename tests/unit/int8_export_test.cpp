// Post-training int8 export (models/weights/int8_export.h): per-row quantization bounds,
// the zlib'd safetensors round trip on a widened tiny model, the eval-loss change
// after the round trip, the size figures, and corrupt or foreign files.
#include <gtest/gtest.h>
#include <zlib.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>

#include "harness/run/train/batches.h"
#include "models/weights/int8_export.h"
#include "harness/run/train/trainer.h"
#include "models/weights/safetensors.h"
#include "variants/registry.h"

namespace twinbench {
namespace {

namespace fs = std::filesystem;

// The tiny preset widened so that some tensors exceed the 65,536-element
// passthrough limit. d_model=256 alone is not enough: with tiny's mlp_dim 192 the
// largest tensors are the [256, 256] embedding and logits kernel, exactly 65,536
// elements (kept). mlp_dim 768 (tiny's 3x ratio) makes the three MLP kernels
// [256, 768] / [768, 256] of each layer quantized; the embedding and logits stay
// at the boundary and must be kept.
RunConfig wide_config() {
  auto c = preset_run_config("tiny", {"train.batch=4", "train.seq_len=64", "train.seed=5"});
  c.model.d_model = 256;
  c.model.mlp_dim = 768;
  return c;
}

std::unique_ptr<Variant> make(const std::string& name, const RunConfig& c) {
  return make_variant(name, {c.model, static_cast<uint64_t>(c.train.seed), torch::kCPU});
}

class Int8Export : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = at::get_num_threads();
    at::set_num_threads(1);  // fixed reduction order: the two variants' losses compare bitwise
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("twinbench_int8_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    at::set_num_threads(threads_);
    fs::remove_all(dir_);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;

 private:
  int threads_ = 1;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string zlib_compress(const std::string& raw) {
  uLongf size = compressBound(raw.size());
  std::string out(size, '\0');
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                      raw.size(), 9),
            Z_OK);
  out.resize(size);
  return out;
}

// load_int8(path) throws std::invalid_argument whose message names the file and
// contains `expected`.
void expect_load_error(const std::string& path, const std::string& expected) {
  try {
    load_int8(path);
    ADD_FAILURE() << "load_int8 accepted " << path;
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  }
}

// The per-row clip the exporter should use: torch.quantile(|w|, 0.9999984, dim=1)
// with linear interpolation, computed here independently by a full sort.
torch::Tensor percentile_clip(const torch::Tensor& rows) {
  const auto sorted = std::get<0>(rows.abs().sort(1));
  const int64_t n = rows.size(1);
  const double pos = 0.9999984 * static_cast<double>(n - 1);
  const auto lo = static_cast<int64_t>(std::floor(pos));
  const int64_t hi = std::min(lo + 1, n - 1);
  return sorted.select(1, lo) + (sorted.select(1, hi) - sorted.select(1, lo)) * (pos - static_cast<double>(lo));
}

// |dequantized - w| <= scale/2 for every weight inside the clip range, and at most
// the clipping excess |w| - clip (+ scale/2) beyond it; plus float rounding.
void expect_within_bounds(const torch::Tensor& original, const torch::Tensor& restored, int in_dims,
                          const std::string& name) {
  const auto rows = quantize_rows_int8(original, in_dims);
  // The same per-row view as the exporter: kernels [in..., out...] -> [out, in].
  int64_t in = 1;
  for (int i = 0; i < in_dims; ++i) in *= original.size(i);
  auto view = [&](const torch::Tensor& t) {
    return in_dims > 0 ? t.reshape({in, -1}).t() : t.reshape({original.size(0), -1});
  };
  const auto w = view(original), r = view(restored);
  const auto s = rows.scale.to(torch::kFloat).unsqueeze(1);
  const auto clip = torch::min(percentile_clip(w).unsqueeze(1), 127 * s);
  const auto excess = (w.abs() - clip).clamp_min(0);
  const auto bound = s / 2 + excess + 1e-6 * w.abs() + 1e-7;
  const auto err = (r - w).abs();
  EXPECT_TRUE((err <= bound).all().item<bool>())
      << name << ": worst error over bound " << (err - bound).max().item<double>();
  // Not trivially satisfied: the error is of the order of the scale somewhere.
  EXPECT_GT((err / s).max().item<double>(), 0.25) << name;
  // The 99.99984th percentile clips these rows little: no weight moves by more than a few steps.
  EXPECT_LT((excess / s).max().item<double>(), 4.0) << name;
}

TEST(Int8Rows, PerRowScalesFollowTheClippedRowMaximum) {
  torch::manual_seed(1);
  // A kernel [in=300, out=400] whose output channel j has magnitude ~ (j + 1).
  const auto mult = torch::arange(1, 401, torch::kFloat);
  const auto w = torch::randn({300, 400}) * mult;
  const auto rows = quantize_rows_int8(w, 1);
  ASSERT_EQ(rows.q.sizes().vec(), (std::vector<int64_t>{400, 300}));  // [out, in]: per output channel
  ASSERT_EQ(rows.scale.sizes().vec(), (std::vector<int64_t>{400}));
  EXPECT_EQ(rows.q.scalar_type(), torch::kChar);
  EXPECT_EQ(rows.scale.scalar_type(), torch::kHalf);
  // With 300 values per row the 99.99984th percentile interpolates between the two
  // largest |w|, 99.95% of the way to the largest.
  const auto clip = percentile_clip(w.t());
  const auto expected = (clip / 127).clamp_min(1.0 / 127).to(torch::kHalf).to(torch::kFloat);
  EXPECT_TRUE(torch::equal(rows.scale.to(torch::kFloat), expected));
  EXPECT_EQ(rows.q.abs().max().item<int>(), 127);
  // The largest |w| of each row lies just above the clip: quantized to +-127.
  expect_within_bounds(w, (rows.q.to(torch::kFloat) * rows.scale.to(torch::kFloat).unsqueeze(1)).t().contiguous(), 1,
                       "kernel");
}

TEST(Int8Rows, OutliersAreClippedAndSmallRowsHitTheScaleFloor) {
  // One row of 1e6 values: the percentile sits between the 2nd and 3rd largest, so a
  // lone outlier is clipped instead of stretching the scale.
  auto w = torch::linspace(-1, 1, 1000000).reshape({1, -1});
  w[0][10] = 100.0f;
  const auto rows = quantize_rows_int8(w, 0);
  EXPECT_LT(rows.scale.item<float>(), 1.01f / 127);
  EXPECT_EQ(rows.q[0][10].item<int>(), 127);
  // A row whose values are all below 1: the seed's 1/127 floor.
  const auto small = torch::full({2, 70000}, 0.01f);
  const auto floor_rows = quantize_rows_int8(small, 0);
  EXPECT_FLOAT_EQ(floor_rows.scale[0].item<float>(), static_cast<float>(c10::Half(1.0f / 127)));
  EXPECT_EQ(floor_rows.q[0][0].item<int>(), 1);  // round(0.01 * 127)
}

TEST(Int8Rows, InputDimsFromCanonicalNames) {
  EXPECT_EQ(int8_export_in_dims("decoder.layers.0.self_attention.out.kernel", 3), 2);
  EXPECT_EQ(int8_export_in_dims("decoder.layers.0.self_attention.query.kernel", 3), 1);
  EXPECT_EQ(int8_export_in_dims("decoder.layers.1.mlp.wo.kernel", 2), 1);
  EXPECT_EQ(int8_export_in_dims("decoder.logits_dense.kernel", 2), 1);
  EXPECT_EQ(int8_export_in_dims("token_embedder.embedding", 2), 0);
  EXPECT_EQ(int8_export_in_dims("decoder.decoder_norm.scale", 1), 0);
}

TEST_F(Int8Export, RoundTripKeepsNamesShapesDtypesAndErrorBounds) {
  const auto c = wide_config();
  const auto weights = make("module", c)->export_canonical();
  const auto path = file("model.int8.zlib");
  const auto stats = export_int8(weights, path);
  const auto back = load_int8(path);

  ASSERT_EQ(back.size(), weights.size());
  int quantized = 0, kept = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const auto& [name, w] = weights[i];
    SCOPED_TRACE(name);
    EXPECT_EQ(back[i].first, name);
    const auto& r = back[i].second;
    EXPECT_EQ(r.sizes(), w.sizes());
    EXPECT_EQ(r.scalar_type(), torch::kFloat);
    EXPECT_EQ(r.scalar_type(), w.scalar_type());
    if (w.numel() > kInt8KeepFloatMaxNumel) {
      ++quantized;
      EXPECT_FALSE(torch::equal(r, w));
      expect_within_bounds(w, r, int8_export_in_dims(name, w.dim()), name);
    } else {
      ++kept;
      EXPECT_TRUE(torch::equal(r, w.to(torch::kHalf).to(torch::kFloat)));  // fp16 precision, nothing more
      EXPECT_TRUE(torch::allclose(r, w, /*rtol=*/1.0 / 1024, /*atol=*/1e-7));
    }
  }
  // Per layer wi_0, wi_1 and wo are quantized; the [256, 256] embedding and logits
  // kernel (exactly 65,536 elements) are kept, like attention and norms.
  EXPECT_EQ(quantized, 3 * c.model.layers);
  EXPECT_EQ(stats.quantized_tensors, quantized);
  EXPECT_EQ(stats.passthrough_tensors, kept);
  EXPECT_EQ(find_tensor(back, "token_embedder.embedding").numel(), kInt8KeepFloatMaxNumel);
  EXPECT_TRUE(torch::equal(find_tensor(back, "token_embedder.embedding"),
                           find_tensor(weights, "token_embedder.embedding").to(torch::kHalf).to(torch::kFloat)));
}

TEST_F(Int8Export, SizeFiguresAndCompressionRatio) {
  const auto c = wide_config();
  const auto model = make("functional", c);
  const auto weights = model->export_canonical();
  const auto path = file("model.int8.zlib");
  const auto stats = export_int8(weights, path);

  EXPECT_EQ(stats.artifact_bytes, static_cast<int64_t>(fs::file_size(path)));
  EXPECT_EQ(stats.raw_fp32_bytes, 4 * model->param_count());
  // Payload: 1 byte per quantized weight + 2 per row scale + 2 per kept value.
  int64_t payload = 0;
  for (const auto& [name, w] : weights) {
    if (w.numel() > kInt8KeepFloatMaxNumel) {
      const int in_dims = int8_export_in_dims(name, w.dim());
      int64_t in = 1;
      for (int i = 0; i < in_dims; ++i) in *= w.size(i);
      payload += w.numel() + 2 * (in_dims > 0 ? w.numel() / in : w.size(0));  // one scale per output channel
    } else {
      payload += 2 * w.numel();
    }
  }
  EXPECT_EQ(stats.payload_bytes, payload);
  EXPECT_DOUBLE_EQ(stats.compression_ratio,
                   static_cast<double>(stats.raw_fp32_bytes) / static_cast<double>(stats.artifact_bytes));
  EXPECT_GT(stats.compression_ratio, 3.0);
  EXPECT_LT(stats.artifact_bytes, stats.payload_bytes);  // zlib gains something over the raw payload
  std::cout << "[ int8 ] params " << model->param_count() << ", fp32 " << stats.raw_fp32_bytes << " B, payload "
            << stats.payload_bytes << " B, artifact " << stats.artifact_bytes << " B, ratio " << stats.compression_ratio
            << "x (payload ratio " << static_cast<double>(stats.raw_fp32_bytes) / stats.payload_bytes << "x)\n";

  // The artifact is plain zlib over a safetensors file: Python's zlib.decompress +
  // safetensors read it; check the same through zlib and twinbench's reader.
  const auto raw = read_bytes(path);
  std::string inflated(static_cast<size_t>(stats.payload_bytes) + (1 << 20), '\0');
  uLongf size = inflated.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(inflated.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                       raw.size()),
            Z_OK);
  inflated.resize(size);
  write_bytes(file("inflated.safetensors"), inflated);
  const auto st = load_safetensors(file("inflated.safetensors"));
  EXPECT_EQ(st.metadata.at("format"), "twinbench-int8-v1");
  EXPECT_EQ(find_tensor(st.tensors, "int8/decoder.layers.0.mlp.wo.kernel").scalar_type(), torch::kChar);
  EXPECT_EQ(find_tensor(st.tensors, "int8/decoder.layers.0.mlp.wo.kernel").sizes().vec(),
            (std::vector<int64_t>{256, 768}));  // [out, in]
  EXPECT_EQ(find_tensor(st.tensors, "scale/decoder.layers.0.mlp.wo.kernel").scalar_type(), torch::kHalf);
  EXPECT_EQ(find_tensor(st.tensors, "keep/decoder.decoder_norm.scale").scalar_type(), torch::kHalf);
}

// Loss on held-out batches before and after the round trip, on weights after a short
// training run (so they are not just the initialisation), and both implementations
// loaded from the same artifact.
TEST_F(Int8Export, EvalLossChangeIsSmallAndSameForBothImplementations) {
  auto c = wide_config();
  c.train.steps = 30;
  c.train.lr = 3e-3;
  auto data = make_batch_source(c, torch::kCPU);
  auto trained = make("module", c);
  const auto result = train(*trained, c, *data);
  const double before = evaluate(*trained, *data, 2);
  const auto path = file("trained.int8.zlib");
  const auto stats = export_int8(trained->export_canonical(), path);
  const auto back = load_int8(path);

  auto module = make("module", c);
  auto functional = make("functional", c);
  module->import_canonical(back);
  functional->import_canonical(back);
  const double after_module = evaluate(*module, *data, 2);
  const double after_functional = evaluate(*functional, *data, 2);
  const double rel = std::abs(after_module - before) / before;
  std::cout << "[ int8 ] eval loss " << before << " -> " << after_module << " (" << (after_module - before)
            << ", " << 100 * rel << "%), artifact " << stats.artifact_bytes << " B, ratio " << stats.compression_ratio
            << "x\n";
  EXPECT_LT(rel, 0.02);
  EXPECT_NE(after_module, before);  // the round trip did change the weights
  EXPECT_EQ(after_functional, after_module);  // one thread: bit-identical kernels and order
  // The training run learned something, so the comparison is not against a flat model.
  EXPECT_LT(before, std::log(256.0) - 0.1);
}

TEST_F(Int8Export, CorruptTruncatedAndForeignFilesAreClearErrors) {
  const auto c = wide_config();
  const auto path = file("model.int8.zlib");
  export_int8(make("module", c)->export_canonical(), path);
  const auto bytes = read_bytes(path);

  write_bytes(file("truncated.zlib"), bytes.substr(0, bytes.size() / 2));
  expect_load_error(file("truncated.zlib"), "truncated");
  write_bytes(file("cut_tail.zlib"), bytes.substr(0, bytes.size() - 3));  // only the checksum is short
  expect_load_error(file("cut_tail.zlib"), "truncated");

  // Not zlib at all: an uncompressed safetensors file.
  save_safetensors(file("plain.safetensors"), {{"w", torch::ones({3})}});
  expect_load_error(file("plain.safetensors"), "not a valid zlib stream");
  write_bytes(file("empty.zlib"), "");
  expect_load_error(file("empty.zlib"), "empty file");
  // A flipped byte in the middle of the deflate data.
  auto flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x5a);
  write_bytes(file("flipped.zlib"), flipped);
  expect_load_error(file("flipped.zlib"), "not a valid zlib stream");
  write_bytes(file("trailing.zlib"), bytes + "junk");
  expect_load_error(file("trailing.zlib"), "trailing bytes");

  // Valid zlib, wrong content: text, and a safetensors file that is not an int8 export.
  write_bytes(file("text.zlib"), zlib_compress("hello, not a model"));
  expect_load_error(file("text.zlib"), "not a valid safetensors file");
  write_bytes(file("foreign.zlib"), zlib_compress(read_bytes(file("plain.safetensors"))));
  expect_load_error(file("foreign.zlib"), "not a twinbench int8 export");
  expect_load_error(file("missing.zlib"), "cannot open");

  // The good file still loads (the checks above are not failing everything).
  EXPECT_NO_THROW(load_int8(path));
}

TEST_F(Int8Export, BadInputsAreRejectedBeforeWriting) {
  NamedTensors bad = {{"a", torch::ones({300, 300})}};
  bad[0].second[7][7] = std::numeric_limits<float>::infinity();
  const auto path = file("bad.zlib");
  try {
    export_int8(bad, path);
    ADD_FAILURE() << "non-finite weights exported";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(export_int8({{"a", torch::ones({2})}, {"a", torch::ones({2})}}, path), std::invalid_argument);
  EXPECT_FALSE(fs::exists(path));
  // A small tensor beyond fp16's range is kept in fp32 rather than turned into inf.
  export_int8({{"big", torch::full({4}, 1e6f)}}, path);
  EXPECT_TRUE(torch::equal(find_tensor(load_int8(path), "big"), torch::full({4}, 1e6f)));
}

}  // namespace
}  // namespace twinbench
