# On-line monitoring (docs/online.md): SCALEA_SNAPSHOT under the real tool, scalea top
# on a terminal (tmux) and in batch mode, scalea report --over-time, and the faults (a killed
# program, a full disk, half-written and corrupt snapshots, bad settings). check_online.py drives
# apps/omp/phases and apps/mpi/mpi_phases, each balanced and then imbalanced.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "tests/online skipped: no Python 3")
  return()
endif()
set(_online ${CMAKE_CURRENT_LIST_DIR})

function(scalea_online_test name)
  scalea_test_tmpdir(_tmp online.${name})
  add_test(NAME online.${name}
    COMMAND ${Python3_EXECUTABLE} ${_online}/check_online.py --bin ${CMAKE_BINARY_DIR}/bin
            --lib ${CMAKE_BINARY_DIR}/lib --workdir ${_tmp} ${ARGN})
  set_tests_properties(online.${name} PROPERTIES LABELS "integration;online" TIMEOUT 90
                       SKIP_RETURN_CODE 77)
endfunction()

# Timing-sensitive (windows of 200 ms, frames read every 100 ms): run alone.
scalea_online_test(omp.live live)
scalea_online_test(omp.unchanged unchanged)
scalea_online_test(killed killed)
scalea_online_test(disk_full disk_full)
scalea_online_test(files files)
set_tests_properties(online.omp.live PROPERTIES RUN_SERIAL TRUE)

find_package(MPI COMPONENTS C)
if(MPI_C_FOUND AND TARGET scalea-mpi)
  scalea_online_test(mpi.np2 --mpirun ${MPIEXEC_EXECUTABLE} mpi)
  set_tests_properties(online.mpi.np2 PROPERTIES RUN_SERIAL TRUE ENVIRONMENT
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
