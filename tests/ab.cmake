# `twinbench ab` end to end (tests/integration/ab_test.cpp) plus its paired-round
# statistics (harness/ab/paired.h). Included from tests/CMakeLists.txt; paths are
# relative to tests/.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

add_executable(twinbench_ab_tests integration/ab_test.cpp)
target_include_directories(twinbench_ab_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(twinbench_ab_tests PRIVATE twinbench_ab GTest::gtest_main nlohmann_json::nlohmann_json
                      SQLite::SQLite3)
target_compile_definitions(twinbench_ab_tests PRIVATE TWINBENCH_BIN="$<TARGET_FILE:twinbench>"
                           TWINBENCH_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_dependencies(twinbench_ab_tests twinbench)
gtest_discover_tests(twinbench_ab_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
