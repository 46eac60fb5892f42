# twinbench-micro and `twinbench db import-micro` end to end (tests/integration/micro_test.cpp).
# Included from tests/CMakeLists.txt; paths are relative to tests/. One ctest entry for
# the whole binary: its fixture runs the benchmarks once (~3 s of CPU) for every test.
add_executable(twinbench_micro_tests integration/micro_test.cpp)
target_include_directories(twinbench_micro_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(twinbench_micro_tests PRIVATE twinbench_store GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(twinbench_micro_tests PRIVATE TWINBENCH_BIN="$<TARGET_FILE:twinbench>"
                           TWINBENCH_MICRO_BIN="$<TARGET_FILE:twinbench-micro>"
                           TWINBENCH_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_dependencies(twinbench_micro_tests twinbench twinbench-micro)
add_test(NAME micro_tests COMMAND twinbench_micro_tests)
set_tests_properties(micro_tests PROPERTIES TIMEOUT 300)
