// safetensors I/O (see safetensors.h). Format: https://github.com/huggingface/safetensors
#include "models/weights/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace twinbench {

namespace {

const std::vector<std::pair<std::string, torch::ScalarType>>& dtype_table() {
  static const std::vector<std::pair<std::string, torch::ScalarType>> table = {
      {"F64", torch::kDouble}, {"F32", torch::kFloat},  {"F16", torch::kHalf},  {"BF16", torch::kBFloat16},
      {"I64", torch::kLong},   {"I32", torch::kInt},    {"I16", torch::kShort}, {"I8", torch::kChar},
      {"U8", torch::kByte},    {"BOOL", torch::kBool}};
  return table;
}

bool little_endian_host() {
  const uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

}  // namespace

std::string safetensors_dtype(torch::ScalarType type) {
  for (const auto& [name, t] : dtype_table())
    if (t == type) return name;
  throw SafetensorsError(fmt::format("dtype {} has no safetensors code", c10::toString(type)));
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  if (!little_endian_host()) throw SafetensorsError("safetensors writing needs a little-endian host");
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    auto t = tensor.detach().to(torch::kCPU).contiguous();
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * t.element_size();
    header[name] = {{"dtype", safetensors_dtype(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(std::move(t));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keep the data 8-byte aligned
  const uint64_t header_len = text.size();

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw SafetensorsError(fmt::format("{}: cannot open for writing: {}", tmp, std::strerror(errno)));
    out.write(reinterpret_cast<const char*>(&header_len), sizeof header_len);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& t : data)
      out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw SafetensorsError(fmt::format("{}: write failed (disk full?)", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw SafetensorsError(fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno)));
  }
}

SafetensorsFile load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw SafetensorsError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  uint64_t header_len = 0;
  if (file_size < 8 || !in.read(reinterpret_cast<char*>(&header_len), 8))
    throw SafetensorsError(fmt::format("{}: truncated: {} bytes, shorter than the 8-byte header length", path,
                                       file_size));
  if (header_len > file_size - 8)
    throw SafetensorsError(fmt::format("{}: truncated: header claims {} bytes but only {} follow", path,
                                       header_len, file_size - 8));
  std::string text(header_len, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_len));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw SafetensorsError(fmt::format("{}: header is not valid JSON: {}", path, e.what()));
  }
  if (!header.is_object()) throw SafetensorsError(fmt::format("{}: header is not a JSON object", path));

  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = file_size - data_start;
  SafetensorsFile file;
  struct Entry {
    std::string name;
    torch::ScalarType type;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : info.items()) file.metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
      continue;
    }
    try {
      Entry e{name, torch::kFloat, info.at("shape").get<std::vector<int64_t>>(), 0, 0};
      const auto code = info.at("dtype").get<std::string>();
      const auto& table = dtype_table();
      const auto it = std::find_if(table.begin(), table.end(), [&](const auto& p) { return p.first == code; });
      if (it == table.end()) throw SafetensorsError(fmt::format("unsupported dtype '{}'", code));
      e.type = it->second;
      const auto offsets = info.at("data_offsets").get<std::vector<uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1]) throw SafetensorsError("bad data_offsets");
      e.begin = offsets[0];
      e.end = offsets[1];
      entries.push_back(std::move(e));
    } catch (const SafetensorsError& err) {
      throw SafetensorsError(fmt::format("{}: tensor '{}': {}", path, name, err.what()));
    } catch (const std::exception& err) {
      throw SafetensorsError(fmt::format("{}: tensor '{}': malformed header entry: {}", path, name, err.what()));
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  for (const auto& e : entries) {
    // Checked products: a lying shape whose element count wraps around must not
    // pass the span check below with a tiny (or zero) byte count.
    uint64_t need = c10::elementSize(e.type);
    for (int64_t s : e.shape) {
      if (s < 0) throw SafetensorsError(fmt::format("{}: tensor '{}': negative dimension", path, e.name));
      if (__builtin_mul_overflow(need, static_cast<uint64_t>(s), &need) || need > static_cast<uint64_t>(INT64_MAX))
        throw SafetensorsError(fmt::format("{}: tensor '{}': shape {} is larger than any file", path, e.name,
                                           fmt::join(e.shape, "x")));
    }
    if (e.end - e.begin != need)
      throw SafetensorsError(fmt::format("{}: tensor '{}': data_offsets span {} bytes but shape and dtype need {}",
                                         path, e.name, e.end - e.begin, need));
    if (e.end > data_size)
      throw SafetensorsError(fmt::format("{}: tensor '{}': truncated: its data ends at byte {} of the data section "
                                         "but the file holds only {}",
                                         path, e.name, e.end, data_size));
    auto t = torch::empty(e.shape, torch::TensorOptions().dtype(e.type));
    in.seekg(static_cast<std::streamoff>(data_start + e.begin));
    if (!in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(need)))
      throw SafetensorsError(fmt::format("{}: tensor '{}': read failed", path, e.name));
    file.tensors.emplace_back(e.name, std::move(t));
  }
  return file;
}

}  // namespace twinbench
