# Unit tests of reports/html and reports/svg: escaping, page shell, charts, tidy
# validation, no-fetch checks and a headless-Chromium screenshot (skipped when
# chromium is absent). Included from tests/CMakeLists.txt; paths relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_html_tests unit/html_test.cpp)
target_link_libraries(twinbench_html_tests PRIVATE twinbench_reports GTest::gtest_main)
target_compile_options(twinbench_html_tests PRIVATE -Wall -Wextra)
gtest_discover_tests(twinbench_html_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 180)
