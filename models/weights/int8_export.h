// Post-training int8 export of canonical weights, after the seed's
// quantize_state_dict_int8 + zlib (../shared/seeds/004_7f3f05a292d6a91e.txt), and
// the way back for evaluating the round-tripped model.
//
// What is quantized, and along which axis:
//   - A float tensor with more than kInt8KeepFloatMaxNumel (65,536) elements is
//     quantized per row to symmetric int8 with one fp16 scale per row. The rows
//     are OUTPUT CHANNELS: a canonical kernel [in..., out...] is viewed as
//     [prod(in), prod(out)] and transposed to [out, in] (the native nn.Linear
//     layout), so each output feature gets its own scale. The number of input dims
//     comes from the canonical name (the attention output kernel [H, hd, d] has
//     two, every other "*.kernel" one). Tensors that are not kernels (the token
//     embedding [V, d]) are viewed as [shape[0], rest]: one scale per token row,
//     as the seed does for its embedding; a 1-D tensor is one row.
//   - Per row: clip = the 99.99984th percentile of |w| (linear interpolation, as
//     torch.quantile), scale = max(clip / 127, 1/127) rounded to fp16, and
//     q = clamp(round(clamp(w, -clip, clip) / scale), -127, 127). The scale is
//     rounded to fp16 BEFORE dividing, so the dequantized q * scale is within
//     scale / 2 of every unclipped weight (the seed divides by the fp32 scale).
//     The 1/127 floor is the seed's: rows whose |w| stays below 1 are quantized on
//     the fixed 1/127 grid.
//   - Smaller float tensors (norm scales, small matrices) are kept as fp16
//     ("passthrough"); one whose values do not fit fp16 is kept as fp32 instead of
//     turning into inf. Non-float tensors are kept as they are.
//
// File format: a safetensors file (models/weights/safetensors.h) holding "int8/<name>"
// [rows, cols] I8 + "scale/<name>" [rows] F16 for quantized tensors and
// "keep/<name>" for passthrough ones, with metadata "format" =
// "twinbench-int8-v1" and "tensors" = a JSON list of {name, kind, shape, in_dims}
// in the exported order. The whole file is zlib-compressed (level 9, zlib
// format, i.e. what Python's zlib.decompress reads) into `path`.
#pragma once

#include <cstdint>
#include <string>

#include "models/named_tensors.h"

namespace twinbench {

inline constexpr int64_t kInt8KeepFloatMaxNumel = 65'536;
inline constexpr double kInt8ClipPercentile = 99.99984;

struct Int8ExportStats {
  int64_t artifact_bytes = 0;        // size of the compressed file on disk
  int64_t raw_fp32_bytes = 0;        // 4 bytes x params (the baseline the seed compares against)
  int64_t payload_bytes = 0;         // int8 weights + fp16 scales + fp16 passthrough, before compression
  double compression_ratio = 0;      // raw_fp32_bytes / artifact_bytes
  int64_t quantized_tensors = 0, passthrough_tensors = 0;
};

// Writes the artifact atomically (a temporary file renamed into place). Throws
// std::invalid_argument naming the tensor for a non-finite weight or a duplicate
// name, std::runtime_error naming the file for an I/O failure.
Int8ExportStats export_int8(const NamedTensors& canonical_weights, const std::string& path);

// Reads the artifact back and dequantizes to fp32 canonical tensors (same names,
// shapes and order as exported; non-float tensors keep their dtype). A missing,
// corrupt or truncated file, or one in another format, is a std::invalid_argument
// naming the file.
NamedTensors load_int8(const std::string& path);

// The quantization of one tensor, exposed for tests: q [rows, cols] int8 and
// scale [rows] fp16 of `weight` viewed as described above with `in_dims` input dims
// (0: [shape[0], rest]).
struct Int8Rows {
  torch::Tensor q, scale;
};
Int8Rows quantize_rows_int8(const torch::Tensor& weight, int in_dims);
// How many leading canonical dims of the tensor called `name` are inputs (see above).
int int8_export_in_dims(const std::string& name, int64_t ndim);

}  // namespace twinbench
