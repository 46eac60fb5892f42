#!/usr/bin/env bash
# Prints the library folders of PYTHON's torch, ':'-separated: torch/lib and the
# CUDA wheels' nvidia/*/lib beside it (cudart, cuBLAS, cuDNN, NCCL, ...). The GPU
# kit takes these from the device and carries everything else (ci/gpu_kit.sh).
#   bash torch_libs.sh [PYTHON]   (default python3)
set -euo pipefail
"${1:-python3}" - <<'PY'
import glob, os, torch
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
site = os.path.dirname(os.path.dirname(torch.__file__))
print(":".join([lib] + sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))))
PY
