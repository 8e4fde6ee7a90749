# Unit tests of the report's reasoning on hand-built experiments (no runtime, exact times).
find_package(fmt REQUIRED)
# The formats layer of report/ (and the layers below it: findings, ...) as the command links it.
add_executable(scalea_report_test ${CMAKE_CURRENT_LIST_DIR}/wait_causes_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/thread_values_test.cpp ${CMAKE_CURRENT_LIST_DIR}/dump_streamed_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/counter_causes_test.cpp ${CMAKE_CURRENT_LIST_DIR}/directive_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_calls_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/formats_test.cpp ${CMAKE_CURRENT_LIST_DIR}/process_test.cpp)
target_include_directories(scalea_report_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/overheads)
target_link_libraries(scalea_report_test PRIVATE scalea-report-formats fmt::fmt GTest::gtest_main)
gtest_discover_tests(scalea_report_test TEST_PREFIX "unit.report." DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS unit)
