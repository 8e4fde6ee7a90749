# tests/papi/: counters per region and thread (collect/papi), `scalea calibrate`, probe-cost
# compensation and the cache-miss pricing rule. Integration tests run the real tool on
# tests/papi/counters_app.c with the events this machine has (the kernel's software events).
set(_pt ${CMAKE_CURRENT_LIST_DIR})
find_package(OpenMP REQUIRED)

add_executable(papi_counters_app ${_pt}/counters_app.c)
target_link_libraries(papi_counters_app PRIVATE OpenMP::OpenMP_C scalea::scalea)
target_compile_options(papi_counters_app PRIVATE -g -O1)
set_target_properties(papi_counters_app PROPERTIES OUTPUT_NAME counters_app
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/papi)

add_executable(scalea_papi_test ${_pt}/counters_test.cpp ${_pt}/calibrate_test.cpp)
target_link_libraries(scalea_papi_test PRIVATE scalea-test-harness GTest::gtest_main)
target_compile_definitions(scalea_papi_test PRIVATE
  SCALEA_PAPI_APP="$<TARGET_FILE:papi_counters_app>")
add_dependencies(scalea_papi_test papi_counters_app scalea scalea-omp scalea-calibrate-probe)
gtest_discover_tests(scalea_papi_test TEST_PREFIX "papi." DISCOVERY_MODE PRE_TEST
  TEST_LIST scalea_papi_test_TESTS PROPERTIES TIMEOUT 300)
scalea_discovered_labels(scalea_papi_test_TESTS integration papi)

add_executable(scalea_papi_unit_test ${_pt}/machine_rule_test.cpp)
target_include_directories(scalea_papi_unit_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/drg)
target_link_libraries(scalea_papi_unit_test PRIVATE scalea-overheads GTest::gtest_main)
gtest_discover_tests(scalea_papi_unit_test TEST_PREFIX "unit.papi." DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS unit)
