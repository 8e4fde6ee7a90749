# tests/study/: `scalea study` and `scalea report STUDYDIR` end to end on a small sleep-based
# OpenMP program (study_app.c) and, MPI-only, on apps/mpi/mpi_planted, plus unit tests of the
# study plan, launcher templates and study.json (report/src/study/study.cpp). The whole area runs in
# well under a minute.
set(_st ${CMAKE_CURRENT_LIST_DIR})
find_package(OpenMP REQUIRED)

add_executable(scalea_study_app ${_st}/study_app.c)
set_target_properties(scalea_study_app PROPERTIES OUTPUT_NAME study_app
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/study)
target_compile_options(scalea_study_app PRIVATE -g)
target_link_libraries(scalea_study_app PRIVATE OpenMP::OpenMP_C)

find_program(SCALEA_GNUPLOT NAMES gnuplot)
set(_have_gnuplot 0)
if(SCALEA_GNUPLOT)
  set(_have_gnuplot 1)
endif()

add_executable(scalea_study_test ${_st}/study_test.cpp)
target_link_libraries(scalea_study_test PRIVATE scalea-report-study GTest::gtest_main)
target_compile_definitions(scalea_study_test PRIVATE
  SCALEA_CLI="$<TARGET_FILE:scalea>"
  STUDY_APP="$<TARGET_FILE:scalea_study_app>"
  SHAPES_APP="$<TARGET_FILE:omp_shapes>"
  STUDY_TMP_ROOT="${CMAKE_CURRENT_BINARY_DIR}"  # each test in STUDY_TMP_ROOT/<its ctest name>.tmp
  STUDY_HAVE_GNUPLOT=${_have_gnuplot})
add_dependencies(scalea_study_test scalea scalea-omp scalea_study_app omp_shapes)
# An MPI-only study runs apps/mpi/mpi_planted through mpirun.
if(TARGET mpi_planted AND TARGET scalea-mpi)
  target_compile_definitions(scalea_study_test PRIVATE STUDY_MPI_APP="$<TARGET_FILE:mpi_planted>")
  add_dependencies(scalea_study_test mpi_planted scalea-mpi)
else()
  target_compile_definitions(scalea_study_test PRIVATE STUDY_MPI_APP="")
endif()
gtest_discover_tests(scalea_study_test TEST_PREFIX "study." DISCOVERY_MODE PRE_TEST
  TEST_LIST scalea_study_test_TESTS PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
scalea_discovered_labels(scalea_study_test_TESTS integration study)
