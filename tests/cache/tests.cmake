# scalea cache: the cache-miss drill-down, on a literal experiment with L2 counters and on a real
# run with the software events this machine offers.
add_executable(make_cache_experiment ${CMAKE_CURRENT_LIST_DIR}/make_cache_experiment.cpp)
target_link_libraries(make_cache_experiment PRIVATE scalea-drg)
add_test(NAME cache.drilldown COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_cache.sh ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(cache.drilldown PROPERTIES LABELS "integration;cache" TIMEOUT 60)
