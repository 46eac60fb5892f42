// safetensors files: exact round trips and clear errors for missing tensors, wrong
// shapes or dtypes, and truncated or malformed files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/weights/safetensors.h"
#include "variants/registry.h"

namespace twinbench {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const auto dir = fs::temp_directory_path() / "twinbench_safetensors_test";
  fs::create_directories(dir);
  return (dir / name).string();
}

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Safetensors, RoundTripIsExactForEveryDtype) {
  const NamedTensors tensors = {
      {"a.f32", torch::randn({3, 5})},
      {"b.bf16", torch::randn({4}).to(torch::kBFloat16)},
      {"c.i8", torch::randint(-128, 127, {2, 2, 2}).to(torch::kChar)},
      {"d.f16", torch::randn({7}).to(torch::kHalf)},
      {"e.scalar", torch::tensor(3.5)},
  };
  const auto path = temp_path("roundtrip.safetensors");
  save_safetensors(path, tensors, {{"k", "v"}});
  const auto file = load_safetensors(path);
  ASSERT_EQ(file.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(file.tensors[i].first, tensors[i].first);
    EXPECT_EQ(file.tensors[i].second.scalar_type(), tensors[i].second.scalar_type());
    EXPECT_TRUE(torch::equal(file.tensors[i].second, tensors[i].second)) << tensors[i].first;
  }
  EXPECT_EQ(file.metadata.at("k"), "v");
  // The data section starts 8-byte aligned.
  std::ifstream in(path, std::ios::binary);
  uint64_t header_len = 0;
  in.read(reinterpret_cast<char*>(&header_len), 8);
  EXPECT_EQ(header_len % 8, 0u);
}

TEST(Safetensors, TruncatedFileNamesTheTensor) {
  const auto path = temp_path("truncated.safetensors");
  save_safetensors(path, {{"first", torch::ones({4})}, {"second", torch::ones({16})}});
  fs::resize_file(path, fs::file_size(path) - 8);
  const auto msg = error_of<SafetensorsError>([&] { load_safetensors(path); });
  EXPECT_NE(msg.find("tensor 'second'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(Safetensors, MalformedHeaders) {
  const auto path = temp_path("bad.safetensors");
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_NE(error_of<SafetensorsError>([&] { load_safetensors(path); }).find("truncated"), std::string::npos);
  {
    std::ofstream out(path, std::ios::binary);
    const uint64_t n = 1000;
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << "{}";
  }
  EXPECT_NE(error_of<SafetensorsError>([&] { load_safetensors(path); }).find("header claims 1000 bytes"),
            std::string::npos);
  {
    std::ofstream out(path, std::ios::binary);
    const std::string text = "{not json";
    const uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << text;
  }
  EXPECT_NE(error_of<SafetensorsError>([&] { load_safetensors(path); }).find("not valid JSON"), std::string::npos);
  {
    std::ofstream out(path, std::ios::binary);
    const std::string text = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}})";
    const uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << text << std::string(16, '\0');
  }
  EXPECT_NE(error_of<SafetensorsError>([&] { load_safetensors(path); }).find("tensor 'w': data_offsets span 8 bytes"),
            std::string::npos);
}

class ImportErrors : public ::testing::Test {
 protected:
  std::unique_ptr<Variant> model = make_variant("module", {preset_config("tiny"), 1, torch::kCPU});
  NamedTensors good = model->export_canonical();
};

TEST_F(ImportErrors, MissingTensorIsNamedAndNothingLoads) {
  auto weights = make_variant("functional", {preset_config("tiny"), 2, torch::kCPU})->export_canonical();
  weights.erase(weights.begin() + 3);  // decoder.layers.0.self_attention.key.kernel
  const auto before = model->export_canonical();
  const auto msg = error_of<std::invalid_argument>([&] { model->import_canonical(weights); });
  EXPECT_NE(msg.find("missing tensor 'decoder.layers.0.self_attention.key.kernel'"), std::string::npos) << msg;
  const auto after = model->export_canonical();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i].second, after[i].second));
}

TEST_F(ImportErrors, WrongShapeIsNamed) {
  good[1].second = torch::ones({65});
  const auto msg = error_of<std::invalid_argument>([&] { model->import_canonical(good); });
  EXPECT_NE(msg.find("'decoder.layers.0.pre_self_attention_layer_norm.scale': shape [65] but the model needs [64]"),
            std::string::npos)
      << msg;
}

TEST_F(ImportErrors, WrongDtypeIsNamed) {
  good[0].second = good[0].second.to(torch::kDouble);
  const auto msg = error_of<std::invalid_argument>([&] { model->import_canonical(good); });
  EXPECT_NE(msg.find("'token_embedder.embedding': dtype Double"), std::string::npos) << msg;
}

TEST_F(ImportErrors, ExtraTensorIsRejected) {
  good.emplace_back("decoder.layers.9.mlp.wo.kernel", torch::ones({1}));
  EXPECT_NE(error_of<std::invalid_argument>([&] { model->import_canonical(good); }).find("unexpected tensor"),
            std::string::npos);
}

}  // namespace
}  // namespace twinbench
