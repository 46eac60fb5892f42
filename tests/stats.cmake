# Unit tests of harness/stats (verdicts, Mann-Whitney U, trends): no LibTorch,
# builds in seconds. Included from tests/CMakeLists.txt; paths are relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_stats_tests unit/stats_test.cpp)
target_link_libraries(twinbench_stats_tests PRIVATE twinbench_stats GTest::gtest_main)
target_compile_options(twinbench_stats_tests PRIVATE -Wall -Wextra)
gtest_discover_tests(twinbench_stats_tests DISCOVERY_TIMEOUT 60)
