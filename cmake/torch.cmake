# Finds the LibTorch twinbench builds against, and the one target every
# LibTorch-using library links: twinbench_torch.
#
# Two lines are supported (README, "Building"):
#   - Debian's LibTorch 1.13 (CPU), found with no hints;
#   - any PyTorch 2.x installation: -DTWINBENCH_TORCH_PYTHON=/path/to/python
#     (ci/venv.sh's .venv/bin/python, or a GPU user's own environment) asks that
#     interpreter for torch.utils.cmake_prefix_path. Passing
#     -DCMAKE_PREFIX_PATH=$(python -c 'import torch;print(torch.utils.cmake_prefix_path)')
#     works the same way.
# PyPI's wheel is CUDA-enabled: TWINBENCH_WITH_CUDA is then defined and the
# CUDA and NCCL paths are compiled (models/torch_compat.h); the binary still
# starts on a machine with no GPU and no driver (libcuda is loaded by the CUDA
# runtime only when a device is used).

set(TWINBENCH_TORCH_PYTHON "" CACHE FILEPATH
    "Python interpreter whose torch package to build against (empty: LibTorch from the system or CMAKE_PREFIX_PATH)")
if(TWINBENCH_TORCH_PYTHON)
  execute_process(
    COMMAND "${TWINBENCH_TORCH_PYTHON}" -c "import torch; print(torch.utils.cmake_prefix_path, end='')"
    OUTPUT_VARIABLE _twinbench_torch_cmake RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "TWINBENCH_TORCH_PYTHON=${TWINBENCH_TORCH_PYTHON} cannot import torch: ${_err}")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH "${_twinbench_torch_cmake}")
endif()

# The installation the prefix path names, if any. TorchConfig.cmake looks for
# libc10 and libtorch with find_library(... PATHS <its prefix>), which searches
# the system first: on a machine that also has Debian's LibTorch it would mix
# that libc10 into a 2.x build. Pin those libraries to the chosen installation.
find_file(_twinbench_torch_config TorchConfig.cmake PATHS ${CMAKE_PREFIX_PATH}
          PATH_SUFFIXES Torch share/cmake/Torch NO_DEFAULT_PATH NO_CACHE)
if(_twinbench_torch_config)
  get_filename_component(TWINBENCH_TORCH_PREFIX "${_twinbench_torch_config}/../../../.." ABSOLUTE)
  foreach(_pair "TORCH_LIBRARY;torch" "c10_LIBRARY;c10" "C10_CUDA_LIBRARY;c10_cuda")
    list(GET _pair 0 _var)
    list(GET _pair 1 _name)
    find_library(${_var} ${_name} PATHS "${TWINBENCH_TORCH_PREFIX}/lib" NO_DEFAULT_PATH)
  endforeach()
endif()

# Caffe2's config links NVRTC by path; take the wheel's own (site-packages/nvidia)
# rather than the toolkit's, so that the binary's run path prefers the wheel's CUDA
# libraries (see the cudart note below).
if(_twinbench_torch_config)
  file(GLOB _wheel_nvrtc "${TWINBENCH_TORCH_PREFIX}/../nvidia/cu*/lib/libnvrtc.so.*")
  list(FILTER _wheel_nvrtc EXCLUDE REGEX "builtins|alt")
  if(_wheel_nvrtc)
    list(GET _wheel_nvrtc 0 _wheel_nvrtc)
    set(CUDA_NVRTC_LIB "${_wheel_nvrtc}" CACHE FILEPATH "NVRTC (the wheel's)" FORCE)
  endif()
endif()

# CUDA 13 no longer ships nvToolsExt; Caffe2 configs older than the nvtx3 switch
# ask for CUDA::nvToolsExt. Give them the header-only nvtx3 under that name.
if(_twinbench_torch_config AND EXISTS "${TWINBENCH_TORCH_PREFIX}/lib/libtorch_cuda.so")
  find_package(CUDAToolkit QUIET)
  if(TARGET CUDA::nvtx3 AND NOT TARGET CUDA::nvToolsExt)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
  endif()
endif()

find_package(Torch REQUIRED)

# Torch's CMake config adds flags for its own consumers; keep them on targets
# that actually use torch.
add_library(twinbench_torch INTERFACE)
target_link_libraries(twinbench_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(twinbench_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(twinbench_torch INTERFACE -Wno-unused-parameter)

# PyPI's torch ships copies of fmt (12.x) headers in its include directory, for
# its own use (the library is inside libtorch_cpu, hidden). twinbench links
# Debian's libfmt, so its headers must win: a directory with a link to them,
# searched before LibTorch's.
list(GET TORCH_INCLUDE_DIRS 0 _torch_include)
if(NOT _torch_include STREQUAL "/usr/include" AND EXISTS "${_torch_include}/fmt" AND EXISTS "/usr/include/fmt")
  set(_shadow "${CMAKE_BINARY_DIR}/system-headers-first")
  file(MAKE_DIRECTORY "${_shadow}")
  file(CREATE_LINK "/usr/include/fmt" "${_shadow}/fmt" SYMBOLIC)
  target_include_directories(twinbench_torch SYSTEM BEFORE INTERFACE "${_shadow}")
endif()
# Its libtorch.so and libtorch_cpu.so also export copies of libstdc++'s
# std::filesystem (linked in statically where they were built). Found before
# libstdc++ they crash (seen: remove_all jumping to address 0), so every binary
# lists libstdc++ first among its dependencies and binds to its definitions.
if(NOT _torch_include STREQUAL "/usr/include")
  add_link_options("LINKER:--push-state,--no-as-needed" "-lstdc++" "LINKER:--pop-state")
endif()

# It also carries its own oneDNN (3.x) inside libtorch_cpu, some of whose
# symbols are exported: Debian's libdnnl (2.6) in the same process then fails
# ("could not execute a primitive"). With such a LibTorch, fp32 CPU products go
# through ATen (MKL in PyPI's wheel) instead of oneDNN called directly
# (models/CMakeLists.txt, models/onednn_gemm.h).
set(TWINBENCH_TORCH_BUNDLES_ONEDNN OFF)
if(NOT _torch_include STREQUAL "/usr/include" AND EXISTS "${_torch_include}/oneapi/dnnl")
  set(TWINBENCH_TORCH_BUNDLES_ONEDNN ON)
endif()

# The CUDA runtime the wheel's own libraries load (site-packages/nvidia/cu13),
# not the toolkit's copy, for what twinbench calls itself (events, versions).
file(GLOB _wheel_cudart "${TWINBENCH_TORCH_PREFIX}/../nvidia/cu*/lib/libcudart.so.*")
if(TARGET CUDA::cudart AND _wheel_cudart)
  list(GET _wheel_cudart 0 _wheel_cudart)
  set_property(TARGET CUDA::cudart PROPERTY IMPORTED_LOCATION "${_wheel_cudart}")
endif()

set(TWINBENCH_WITH_CUDA OFF)
if(TARGET torch_cuda OR TARGET c10_cuda)
  set(TWINBENCH_WITH_CUDA ON)
  # A CUDA build of LibTorch: enable the GPU paths (see models/torch_compat.h).
  target_compile_definitions(twinbench_torch INTERFACE TWINBENCH_WITH_CUDA)
  # ProcessGroupNCCL.hpp's layout depends on the nccl.h it sees: use the headers
  # of the NCCL the wheel's libraries load (site-packages/nvidia/nccl).
  find_path(TWINBENCH_NCCL_INCLUDE nccl.h PATHS "${TWINBENCH_TORCH_PREFIX}/../nvidia/nccl/include" NO_DEFAULT_PATH)
  if(TWINBENCH_NCCL_INCLUDE)
    target_include_directories(twinbench_torch SYSTEM BEFORE INTERFACE "${TWINBENCH_NCCL_INCLUDE}")
  endif()
  message(STATUS "twinbench: CUDA build (LibTorch ${Torch_VERSION} at ${TWINBENCH_TORCH_PREFIX}; NCCL headers: ${TWINBENCH_NCCL_INCLUDE})")
else()
  message(STATUS "twinbench: CPU build (LibTorch ${Torch_VERSION})")
endif()
