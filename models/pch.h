// Precompiled header shared by every LibTorch translation unit (see CMakeLists.txt).
#pragma once
#include <torch/torch.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
