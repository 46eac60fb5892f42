# Unit tests of harness/store (no LibTorch). Included from tests/CMakeLists.txt;
# paths are relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_store_tests unit/store_test.cpp)
# SQLite directly too: the tests build old-schema and tampered files with raw SQL.
target_link_libraries(twinbench_store_tests
  PRIVATE twinbench_store SQLite::SQLite3 fmt::fmt GTest::gtest_main)
target_compile_options(twinbench_store_tests PRIVATE -Wall -Wextra)
gtest_discover_tests(twinbench_store_tests)
