// Reading and writing safetensors files: an 8-byte little-endian header length,
// a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then
// the raw little-endian tensor data. Written and read by twinbench itself.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "models/named_tensors.h"

namespace twinbench {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SafetensorsFile {
  NamedTensors tensors;  // in file order (by data offset)
  std::map<std::string, std::string> metadata;
};

// Writes to `path` atomically (a temporary file renamed into place), so a failed
// write (e.g. a full disk) never leaves a half-written file under that name.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Throws SafetensorsError naming the file and, where it applies, the tensor.
SafetensorsFile load_safetensors(const std::string& path);

// "F32", "BF16", ... for a torch dtype, and back.
std::string safetensors_dtype(torch::ScalarType type);

}  // namespace twinbench
