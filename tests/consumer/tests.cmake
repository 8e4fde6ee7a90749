# tests/consumer/: the install and the exported package work for another CMake project
# (find_package(scalea) + scalea::scalea), checked end to end by run_consumer.cmake.
scalea_test_tmpdir(_consumer_tmp consumer.find_package)
add_test(NAME consumer.find_package
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/project
    -DWORK_DIR=${_consumer_tmp}
    -DC_COMPILER=${CMAKE_C_COMPILER}
    -P ${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
set_tests_properties(consumer.find_package PROPERTIES LABELS "integration;consumer" TIMEOUT 300)
