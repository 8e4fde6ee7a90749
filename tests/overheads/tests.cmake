# Unit tests of the overhead classifier on hand-built experiments (no runtime, exact times).
add_executable(scalea_overheads_test ${CMAKE_CURRENT_LIST_DIR}/classify_test.cpp)
target_link_libraries(scalea_overheads_test PRIVATE scalea-overheads GTest::gtest_main)
gtest_discover_tests(scalea_overheads_test TEST_PREFIX "unit.overheads." DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS unit)
target_compile_definitions(scalea_overheads_test PRIVATE SCALEA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
