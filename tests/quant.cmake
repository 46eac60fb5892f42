# Unit tests of models/quant and models/fp8 (int8 fake quantization with STE, exact fp8
# emulation, per-tensor fp8 scaling). Included from tests/CMakeLists.txt; paths are relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_quant_tests unit/quant_test.cpp)
target_link_libraries(twinbench_quant_tests PRIVATE twinbench_models GTest::gtest_main)
target_compile_options(twinbench_quant_tests PRIVATE -Wall -Wextra)
target_precompile_headers(twinbench_quant_tests REUSE_FROM twinbench_pch)
gtest_discover_tests(twinbench_quant_tests DISCOVERY_TIMEOUT 120)
