# Unit tests of harness/optim (LibTorch, tiny model on CPU). Included from
# tests/CMakeLists.txt; paths are relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_optim_tests unit/optim_test.cpp)
target_link_libraries(twinbench_optim_tests PRIVATE twinbench_optim twinbench_harness_core GTest::gtest_main)
target_compile_options(twinbench_optim_tests PRIVATE -Wall -Wextra)
target_precompile_headers(twinbench_optim_tests REUSE_FROM twinbench_pch)
gtest_discover_tests(twinbench_optim_tests DISCOVERY_TIMEOUT 120)
