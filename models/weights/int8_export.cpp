// Post-training int8 export and its loader (see int8_export.h).
#include "models/weights/int8_export.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "models/config.h"
#include "models/weights/safetensors.h"

namespace twinbench {

namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "twinbench-int8-v1";
constexpr const char* kQPrefix = "int8/";
constexpr const char* kScalePrefix = "scale/";
constexpr const char* kKeepPrefix = "keep/";
constexpr size_t kChunk = size_t{1} << 20;  // zlib streaming buffer
constexpr int64_t kRowBlockElements = int64_t{1} << 24;  // rows quantized at a time, bounds temporaries
constexpr double kFp16Max = 65504.0;

// A temporary file in the system temp directory, removed when this goes out of scope.
class TempFile {
 public:
  TempFile() {
    std::string tmpl = (fs::temp_directory_path() / "twinbench-int8-XXXXXX").string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw std::runtime_error(fmt::format("cannot create a temporary file {}: {}", tmpl, std::strerror(errno)));
    ::close(fd);
    path_ = tmpl;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path_, ec);
    fs::remove(path_ + ".tmp", ec);  // save_safetensors' own temporary, if it failed midway
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// [rows, cols] of the per-row view of a tensor of `shape` with `in_dims` input dims.
std::pair<int64_t, int64_t> row_view(const std::vector<int64_t>& shape, int in_dims) {
  if (shape.empty()) return {1, 1};
  if (in_dims <= 0) {
    if (shape.size() == 1) return {1, shape[0]};
    return {shape[0], numel_of(shape) / std::max<int64_t>(shape[0], 1)};
  }
  int64_t in = 1;
  for (int i = 0; i < in_dims; ++i) in *= shape[static_cast<size_t>(i)];
  return {numel_of(shape) / std::max<int64_t>(in, 1), in};  // [out, in]
}

// The per-row view of `t` (no copy): [out, in] for kernels, [shape[0], rest] otherwise.
torch::Tensor rows_of(const torch::Tensor& t, int in_dims) {
  const auto [rows, cols] = row_view(t.sizes().vec(), in_dims);
  if (in_dims <= 0) return t.reshape({rows, cols});
  return t.reshape({cols, rows}).t();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --- zlib streaming --------------------------------------------------------------

void compress_file(const std::string& from, const std::string& to, const std::string& artifact) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("int8 export '{}': cannot reopen the temporary {}", artifact, from));
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error(fmt::format("int8 export '{}': cannot open {} for writing: {}", artifact, to,
                                         std::strerror(errno)));
  z_stream zs{};
  if (deflateInit(&zs, 9) != Z_OK) throw std::runtime_error(fmt::format("int8 export '{}': deflateInit failed", artifact));
  std::vector<char> ibuf(kChunk), obuf(kChunk);
  int flush = Z_NO_FLUSH;
  do {
    in.read(ibuf.data(), static_cast<std::streamsize>(ibuf.size()));
    const auto got = in.gcount();
    if (in.bad()) {
      deflateEnd(&zs);
      throw std::runtime_error(fmt::format("int8 export '{}': reading {} failed", artifact, from));
    }
    flush = in.eof() ? Z_FINISH : Z_NO_FLUSH;
    zs.next_in = reinterpret_cast<Bytef*>(ibuf.data());
    zs.avail_in = static_cast<uInt>(got);
    do {
      zs.next_out = reinterpret_cast<Bytef*>(obuf.data());
      zs.avail_out = static_cast<uInt>(obuf.size());
      const int rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        throw std::runtime_error(fmt::format("int8 export '{}': deflate failed", artifact));
      }
      out.write(obuf.data(), static_cast<std::streamsize>(obuf.size() - zs.avail_out));
    } while (zs.avail_out == 0);
  } while (flush != Z_FINISH);
  deflateEnd(&zs);
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("int8 export '{}': write failed (disk full?)", artifact));
}

// Inflates the zlib stream in `from` into `to`; every failure names `from`.
void decompress_file(const std::string& from, const std::string& to) {
  auto fail = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("int8 artifact '{}': {}", from, why));
  };
  std::ifstream in(from, std::ios::binary);
  if (!in) throw fail(fmt::format("cannot open: {}", std::strerror(errno)));
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(fmt::format("int8 artifact '{}': cannot open the temporary {}", from, to));
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) throw std::runtime_error(fmt::format("int8 artifact '{}': inflateInit failed", from));
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  std::vector<char> ibuf(kChunk), obuf(kChunk);
  int64_t read_total = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    in.read(ibuf.data(), static_cast<std::streamsize>(ibuf.size()));
    const auto got = in.gcount();
    if (in.bad()) throw fail("read error");
    if (got == 0)
      throw fail(read_total == 0 ? "empty file, not a zlib-compressed int8 artifact"
                                 : fmt::format("truncated: the zlib stream ends early after {} bytes", read_total));
    read_total += got;
    zs.next_in = reinterpret_cast<Bytef*>(ibuf.data());
    zs.avail_in = static_cast<uInt>(got);
    do {
      zs.next_out = reinterpret_cast<Bytef*>(obuf.data());
      zs.avail_out = static_cast<uInt>(obuf.size());
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR)
        throw fail(fmt::format("not a valid zlib stream ({})", zs.msg ? zs.msg : "data error"));
      if (rc == Z_MEM_ERROR) throw std::runtime_error(fmt::format("int8 artifact '{}': out of memory inflating", from));
      out.write(obuf.data(), static_cast<std::streamsize>(obuf.size() - zs.avail_out));
      if (rc == Z_STREAM_END) break;
      // Z_BUF_ERROR with input left cannot happen with a fresh output buffer; with no input left it
      // just means "feed me more".
    } while (zs.avail_out == 0 || zs.avail_in > 0);
  }
  if (zs.avail_in > 0 || in.peek() != std::char_traits<char>::eof())
    throw fail("trailing bytes after the end of the zlib stream");
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("int8 artifact '{}': writing the temporary {} failed", from, to));
}

}  // namespace

int int8_export_in_dims(const std::string& name, int64_t ndim) {
  if (ndim < 2) return 0;
  if (ends_with(name, canonical::kOut)) return 2;  // [H, hd, d]
  if (ends_with(name, ".kernel")) return 1;        // [d, H, hd], [d, mlp], [mlp, d], [d, V]
  return 0;                                        // token embedding [V, d]: one scale per token
}

Int8Rows quantize_rows_int8(const torch::Tensor& weight, int in_dims) {
  torch::NoGradGuard no_grad;
  const auto view = rows_of(weight.detach(), in_dims);
  const int64_t rows = view.size(0), cols = view.size(1);
  auto q = torch::empty({rows, cols}, torch::TensorOptions().dtype(torch::kChar));
  auto scale = torch::empty({rows}, torch::TensorOptions().dtype(torch::kHalf));
  if (rows == 0 || cols == 0) return {q, scale};
  // torch.quantile's linear interpolation between the sorted values at floor/ceil of
  // q * (cols - 1); they are among the top k = cols - floor(...) values of the row.
  const double pos = kInt8ClipPercentile / 100.0 * static_cast<double>(cols - 1);
  const int64_t lo = static_cast<int64_t>(std::floor(pos));
  const int64_t hi = std::min(lo + 1, cols - 1);
  const float frac = static_cast<float>(pos - static_cast<double>(lo));
  const int64_t k = cols - lo;
  const int64_t block = std::max<int64_t>(1, kRowBlockElements / cols);
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t n = std::min(block, rows - r0);
    const auto w = view.narrow(0, r0, n).to(torch::kFloat).contiguous();
    const auto top = std::get<0>(w.abs().topk(k, /*dim=*/1, /*largest=*/true, /*sorted=*/true));  // descending
    const auto v_lo = top.select(1, k - 1);            // ascending index lo
    const auto v_hi = top.select(1, cols - 1 - hi);    // ascending index hi
    const auto clip = v_lo + (v_hi - v_lo) * frac;
    // The scale the file stores (fp16), used for the division too.
    const auto s = (clip / 127.0).clamp_min(1.0 / 127.0).to(torch::kHalf);
    const auto s32 = s.to(torch::kFloat).unsqueeze(1);
    const auto c = clip.unsqueeze(1);
    const auto qb = torch::clamp(torch::round(torch::max(torch::min(w, c), -c) / s32), -127, 127).to(torch::kChar);
    q.narrow(0, r0, n).copy_(qb.to(torch::kCPU));
    scale.narrow(0, r0, n).copy_(s.to(torch::kCPU));
  }
  return {q, scale};
}

Int8ExportStats export_int8(const NamedTensors& canonical_weights, const std::string& path) {
  torch::NoGradGuard no_grad;
  Int8ExportStats stats;
  NamedTensors file_tensors;
  nlohmann::json entries = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& [name, tensor] : canonical_weights) {
    if (!tensor.defined()) throw std::invalid_argument(fmt::format("int8 export '{}': tensor '{}' is undefined", path, name));
    if (!seen.insert(name).second)
      throw std::invalid_argument(fmt::format("int8 export '{}': tensor '{}' appears twice", path, name));
    const auto t = tensor.detach();
    const auto shape = t.sizes().vec();
    stats.raw_fp32_bytes += 4 * t.numel();
    nlohmann::json entry = {{"name", name}, {"shape", shape}};
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>())
      throw std::invalid_argument(
          fmt::format("int8 export '{}': tensor '{}' holds non-finite values (inf or NaN)", path, name));
    if (t.is_floating_point() && t.numel() > kInt8KeepFloatMaxNumel) {
      const int in_dims = int8_export_in_dims(name, t.dim());
      auto rows = quantize_rows_int8(t, in_dims);
      stats.payload_bytes += rows.q.numel() + 2 * rows.scale.numel();
      file_tensors.emplace_back(kQPrefix + name, rows.q);
      file_tensors.emplace_back(kScalePrefix + name, rows.scale);
      entry["kind"] = "int8";
      entry["in_dims"] = in_dims;
      ++stats.quantized_tensors;
    } else {
      torch::Tensor kept = t.to(torch::kCPU).contiguous();
      if (t.is_floating_point()) {
        const bool fits_fp16 = t.numel() == 0 || t.abs().max().item<double>() <= kFp16Max;
        kept = kept.to(fits_fp16 ? torch::kHalf : torch::kFloat);
      }
      stats.payload_bytes += kept.numel() * static_cast<int64_t>(kept.element_size());
      file_tensors.emplace_back(kKeepPrefix + name, kept);
      entry["kind"] = "keep";
      ++stats.passthrough_tensors;
    }
    entries.push_back(std::move(entry));
  }

  TempFile raw;
  try {
    save_safetensors(raw.path(), file_tensors, {{"format", kFormat}, {"tensors", entries.dump()}});
  } catch (const SafetensorsError& e) {
    throw std::runtime_error(fmt::format("int8 export '{}': writing the uncompressed safetensors failed: {}", path,
                                         e.what()));
  }
  const std::string tmp = path + ".tmp";
  try {
    compress_file(raw.path(), tmp, path);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("int8 export '{}': cannot rename into place: {}", path, std::strerror(err)));
  }
  stats.artifact_bytes = static_cast<int64_t>(fs::file_size(path));
  stats.compression_ratio =
      stats.artifact_bytes > 0 ? static_cast<double>(stats.raw_fp32_bytes) / static_cast<double>(stats.artifact_bytes) : 0;
  return stats;
}

NamedTensors load_int8(const std::string& path) {
  auto fail = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("int8 artifact '{}': {}", path, why));
  };
  TempFile raw;
  decompress_file(path, raw.path());
  SafetensorsFile file;
  try {
    file = load_safetensors(raw.path());
  } catch (const SafetensorsError& e) {
    throw fail(fmt::format("decompressed, but not a valid safetensors file: {}", e.what()));
  }
  const auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != kFormat)
    throw fail(fmt::format("not a twinbench int8 export (metadata format '{}', expected '{}')",
                           format == file.metadata.end() ? "" : format->second, kFormat));
  nlohmann::json entries;
  try {
    entries = nlohmann::json::parse(file.metadata.at("tensors"));
  } catch (const std::exception& e) {
    throw fail(fmt::format("bad 'tensors' metadata: {}", e.what()));
  }
  if (!entries.is_array()) throw fail("bad 'tensors' metadata: not a list");

  std::map<std::string, torch::Tensor> stored;
  for (auto& [n, t] : file.tensors) stored[n] = t;
  auto take = [&](const std::string& key) {
    const auto it = stored.find(key);
    if (it == stored.end()) throw fail(fmt::format("tensor '{}' is missing", key));
    auto t = it->second;
    stored.erase(it);
    return t;
  };

  torch::NoGradGuard no_grad;
  NamedTensors out;
  for (const auto& entry : entries) {
    std::string name, kind;
    std::vector<int64_t> shape;
    int in_dims = 0;
    try {
      name = entry.at("name").get<std::string>();
      kind = entry.at("kind").get<std::string>();
      shape = entry.at("shape").get<std::vector<int64_t>>();
      if (kind == "int8") in_dims = entry.at("in_dims").get<int>();
    } catch (const std::exception& e) {
      throw fail(fmt::format("bad 'tensors' metadata entry {}: {}", entry.dump(), e.what()));
    }
    for (int64_t s : shape)
      if (s < 0) throw fail(fmt::format("tensor '{}': negative dimension", name));
    if (kind == "keep") {
      auto t = take(kKeepPrefix + name);
      if (t.sizes().vec() != shape) throw fail(fmt::format("tensor '{}': stored shape differs from the metadata", name));
      out.emplace_back(name, t.is_floating_point() ? t.to(torch::kFloat) : t);
    } else if (kind == "int8") {
      if (in_dims < 0 || in_dims > static_cast<int>(shape.size()))
        throw fail(fmt::format("tensor '{}': in_dims {} out of range", name, in_dims));
      const auto [rows, cols] = row_view(shape, in_dims);
      const auto q = take(kQPrefix + name);
      const auto s = take(kScalePrefix + name);
      if (q.scalar_type() != torch::kChar || s.scalar_type() != torch::kHalf)
        throw fail(fmt::format("tensor '{}': expected I8 weights and F16 scales", name));
      if (q.sizes().vec() != std::vector<int64_t>{rows, cols} || s.sizes().vec() != std::vector<int64_t>{rows})
        throw fail(fmt::format("tensor '{}': stored [{}, {}] weights / [{}] scales do not match shape and in_dims", name,
                               q.dim() > 0 ? q.size(0) : 0, q.dim() > 1 ? q.size(1) : 0, s.dim() > 0 ? s.size(0) : 0));
      // Exact in fp32: |q| <= 127 (7 bits) times an fp16 scale (11-bit significand).
      const auto deq = q.to(torch::kFloat) * s.to(torch::kFloat).unsqueeze(1);  // [rows, cols]
      const auto canonical = in_dims > 0 ? deq.t().reshape(shape) : deq.reshape(shape);
      out.emplace_back(name, canonical.contiguous());
    } else {
      throw fail(fmt::format("tensor '{}': unknown kind '{}'", name, kind));
    }
  }
  if (!stored.empty()) throw fail(fmt::format("tensor '{}' is not listed in the metadata", stored.begin()->first));
  return out;
}

}  // namespace twinbench
