# Unit tests of merging store files and exporting runs (harness/store/merge.h,
# export.h; no LibTorch). Included from tests/CMakeLists.txt; paths are
# relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_store_merge_tests unit/store_merge_test.cpp)
# SQLite directly too: the tests build old-schema and newer-schema files with raw
# SQL; nlohmann_json parses the JSON export.
target_link_libraries(twinbench_store_merge_tests
  PRIVATE twinbench_store SQLite::SQLite3 fmt::fmt nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_options(twinbench_store_merge_tests PRIVATE -Wall -Wextra)
gtest_discover_tests(twinbench_store_merge_tests)
