# Fault tests: signals, crashes, exit from a worker, fork, unwritable output, a full
# disk, two runs
# aimed at one directory, a planted symlink. Each runs the real program under the real tool.
add_executable(faulty ${CMAKE_CURRENT_LIST_DIR}/faulty.c)
target_link_libraries(faulty PRIVATE OpenMP::OpenMP_C scalea-omp)
target_compile_options(faulty PRIVATE -g)
foreach(case term int segv exit fork unwritable disk_full same_dir symlink umask)
  add_test(NAME faults.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_faults.sh ${CMAKE_BINARY_DIR}/bin ${case})
  set_tests_properties(faults.${case} PROPERTIES LABELS "integration;faults" TIMEOUT 60
    SKIP_RETURN_CODE 77)
endforeach()
