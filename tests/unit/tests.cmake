# Unit tests of the in-process recorder and its adapters, driven by synthetic events (no OpenMP
# runtime): the OMPT callbacks are called directly, with a clock the test sets.
add_executable(scalea_collect_test ${CMAKE_CURRENT_LIST_DIR}/ompt_events_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/recorder_roundtrip_test.cpp)
target_link_libraries(scalea_collect_test PRIVATE scalea-recorder scalea-drg GTest::gtest_main)
gtest_discover_tests(scalea_collect_test TEST_PREFIX "unit.collect." DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS unit)
