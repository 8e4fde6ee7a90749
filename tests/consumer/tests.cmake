# tests/consumer/: the install as users and packagers use it, checked end to end by
# run_consumer.cmake from a fresh prefix: find_package(scalea) + scalea::scalea in another CMake
# project, builds with pkg-config (C, and Fortran when scalea has its module) run under the
# installed `scalea run`, the man pages, bash
# completion, docs and --version (cmake/install_kit.cmake).
find_program(SCALEA_BASH bash REQUIRED)
scalea_test_tmpdir(_consumer_tmp consumer.install)
add_test(NAME consumer.install
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/project
    -DSCALEA_SOURCE=${PROJECT_SOURCE_DIR}
    -DWORK_DIR=${_consumer_tmp}
    -DC_COMPILER=${CMAKE_C_COMPILER}
    "-DFORTRAN_COMPILER=${CMAKE_Fortran_COMPILER}"
    -DPKG_CONFIG=${PKG_CONFIG_EXECUTABLE} -DBASH=${SCALEA_BASH} -DMAN_PAGES=${SCALEA_MAN_PAGES}
    -P ${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
set_tests_properties(consumer.install PROPERTIES LABELS "integration;consumer" TIMEOUT 300)
