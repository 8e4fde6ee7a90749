# tests/groundtruth/: the ground truth of the overhead classifier (docs/groundtruth.md). The
# planted-overhead apps (apps/omp, apps/mpi) run under the real tool at several p (1, 2, 4, 8
# threads; 1, 2, 4 ranks; oversubscribed: the work is sleep-based), and every planted overhead must
# come out of overheads::classify in its class, subclass and region within 10% of its planted size
# (or 2 ms), with no more than that attributed elsewhere. One ctest test per (app, p).
# The areas are included in alphabetical order, before tests/integration defines the harness: define
# everything at the end of tests/CMakeLists.txt.
set(_scalea_gt_dir ${CMAKE_CURRENT_LIST_DIR})

# Registers the GoogleTest tests of `exe` as groundtruth.<test>, with `labels` and the environment
# mpirun needs as root. RUN_SERIAL: the planted sizes are sleeps, and the tolerance is 10% or 2 ms;
# other tests running at the same time on a 2-core machine would only add noise. CMake 3.25's
# gtest_discover_tests splits list-valued properties (LABELS a;b becomes LABELS a plus a property
# named b): they are set in a ctest script included after the discovered tests.
function(_scalea_gt_discover exe labels)
  gtest_discover_tests(${exe} TEST_PREFIX groundtruth. DISCOVERY_MODE PRE_TEST
    TEST_LIST ${exe}_TESTS PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
  set(_props ${CMAKE_CURRENT_BINARY_DIR}/${exe}_properties.cmake)
  file(WRITE ${_props} "foreach(_t IN LISTS ${exe}_TESTS)
  set_tests_properties(\"\${_t}\" PROPERTIES LABELS \"${labels}\"
    ENVIRONMENT \"OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1\")
endforeach()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_props})
endfunction()
function(_scalea_groundtruth_tests)
  if(NOT TARGET scalea-test-harness)
    message(STATUS "tests/groundtruth skipped: no integration harness")
    return()
  endif()

  add_executable(scalea_groundtruth ${_scalea_gt_dir}/groundtruth_test.cpp)
  target_link_libraries(scalea_groundtruth PRIVATE scalea-test-harness GTest::gtest_main)

  set(_gt_deps scalea scalea-omp)
  foreach(app omp_imbalance omp_locks omp_serial omp_single omp_nested scalea-mpi mpi_planted mpi_hybrid
              mpi_shapes mpi_sites)
    if(TARGET ${app})
      list(APPEND _gt_deps ${app})
    endif()
  endforeach()
  add_dependencies(scalea_groundtruth ${_gt_deps})

  # MPI: the planted MPI apps run with the real mpirun; without MPI those tests skip themselves.
  find_package(MPI COMPONENTS C QUIET)
  set(_gt_mpirun "")
  if(MPI_C_FOUND AND TARGET scalea-mpi AND TARGET mpi_planted AND TARGET mpi_hybrid)
    set(_gt_mpirun "${MPIEXEC_EXECUTABLE}")
  endif()
  target_compile_definitions(scalea_groundtruth PRIVATE SCALEA_GT_MPIRUN="${_gt_mpirun}")

  _scalea_gt_discover(scalea_groundtruth "integration;groundtruth")

  # Call-path sampling (sampling_test.cpp): the functions' CPU time, and programs with signals of
  # their own.
  add_executable(scalea_gt_sampling ${_scalea_gt_dir}/sampling_test.cpp)
  target_link_libraries(scalea_gt_sampling PRIVATE scalea-test-harness GTest::gtest_main)
  target_compile_definitions(scalea_gt_sampling PRIVATE SCALEA_GT_MPIRUN="${_gt_mpirun}")
  set(_sampling_deps scalea scalea-omp omp_sampled omp_sampled_cxx omp_own_signals
      omp_sampled_recursion)
  foreach(app omp_sampled_f scalea-mpi mpi_sampled)
    if(TARGET ${app})
      list(APPEND _sampling_deps ${app})
    endif()
  endforeach()
  # A program run where perf_event_open is refused (a seccomp filter, as in a container).
  add_executable(gt_without_perf_events ${_scalea_gt_dir}/without_perf_events.c)
  target_compile_definitions(scalea_gt_sampling PRIVATE
    SCALEA_GT_WITHOUT_PERF="$<TARGET_FILE:gt_without_perf_events>")
  list(APPEND _sampling_deps gt_without_perf_events)
  add_dependencies(scalea_gt_sampling ${_sampling_deps})
  _scalea_gt_discover(scalea_gt_sampling "integration;groundtruth;sampling")

  # File I/O as regions (io_test.cpp): the calls' bytes and times, and the program unchanged.
  add_executable(scalea_gt_io ${_scalea_gt_dir}/io_test.cpp)
  target_link_libraries(scalea_gt_io PRIVATE scalea-test-harness GTest::gtest_main)
  target_compile_definitions(scalea_gt_io PRIVATE SCALEA_GT_MPIRUN="${_gt_mpirun}")
  add_dependencies(scalea_gt_io scalea scalea-omp omp_io_planted)
  gtest_discover_tests(scalea_gt_io TEST_PREFIX groundtruth. DISCOVERY_MODE PRE_TEST
    TEST_LIST scalea_gt_io_TESTS PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
  set(_props ${CMAKE_CURRENT_BINARY_DIR}/scalea_gt_io_properties.cmake)
  file(WRITE ${_props} [=[
foreach(_t IN LISTS scalea_gt_io_TESTS)
  set_tests_properties("${_t}" PROPERTIES LABELS "integration;groundtruth;io")
endforeach()
]=])
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_props})

  # The shapes of real codes (diagnoses_test.cpp): under libomp 14 and, when it is unpacked beside
  # the build, libomp 19 (first on the library path; the harness checks the runtime seen).
  add_executable(scalea_gt_diagnoses ${_scalea_gt_dir}/diagnoses_test.cpp)
  target_link_libraries(scalea_gt_diagnoses PRIVATE scalea-test-harness GTest::gtest_main)
  target_compile_definitions(scalea_gt_diagnoses PRIVATE SCALEA_GT_MPIRUN="${_gt_mpirun}")
  add_dependencies(scalea_gt_diagnoses scalea scalea-omp omp_shapes)
  set(_text "")
  foreach(_rt 14 19)
    if(_rt STREQUAL 19 AND NOT SCALEA_LIBOMP19_DIR)
      continue()
    endif()
    gtest_discover_tests(scalea_gt_diagnoses TEST_PREFIX groundtruth.omp${_rt}. DISCOVERY_MODE PRE_TEST
      TEST_LIST scalea_gt_diagnoses_${_rt} PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
    set(_env "OMPI_ALLOW_RUN_AS_ROOT=1")
    if(_rt STREQUAL 19)
      set(_env "LD_LIBRARY_PATH=${SCALEA_LIBOMP19_DIR};SCALEA_EXPECT_LIBOMP=19")
    endif()
    string(APPEND _text "foreach(_t IN LISTS scalea_gt_diagnoses_${_rt})\n  set_tests_properties(\"\${_t}\" PROPERTIES LABELS \"integration;groundtruth;omp${_rt}\" ENVIRONMENT \"${_env}\")\nendforeach()\n")
  endforeach()
  set(_props ${CMAKE_CURRENT_BINARY_DIR}/scalea_gt_diagnoses_properties.cmake)
  file(WRITE ${_props} "${_text}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_props})
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} CALL _scalea_groundtruth_tests)
