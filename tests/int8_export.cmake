# Post-training int8 export (harness/int8_export.h): quantization bounds, the
# zlib'd safetensors round trip on a tiny model, loss change, corrupt files.
# Included from tests/CMakeLists.txt; paths are relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_int8_export_tests unit/int8_export_test.cpp)
target_link_libraries(twinbench_int8_export_tests PRIVATE twinbench_harness GTest::gtest_main)
target_precompile_headers(twinbench_int8_export_tests REUSE_FROM twinbench_pch)
gtest_discover_tests(twinbench_int8_export_tests DISCOVERY_TIMEOUT 120)
