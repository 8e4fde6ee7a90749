# MPI integration tests (tests/mpi): real mpirun, oversubscribed, at 1, 2 and 4 ranks (and 8 for a
# deeper unification tree, 64 for the few-files layout). check_mpi.py runs the program under the tool, loads the experiment
# with mpi_dump and asserts structure, bytes and planted times. See docs/mpi.md.
find_package(MPI COMPONENTS C)
find_package(Python3 COMPONENTS Interpreter)
if(NOT TARGET scalea-mpi OR NOT MPI_C_FOUND OR NOT Python3_Interpreter_FOUND)
  message(STATUS "tests/mpi skipped: no libscalea-mpi.so, MPI or Python 3")
  return()
endif()

add_executable(mpi_dump ${CMAKE_CURRENT_LIST_DIR}/mpi_dump.cpp)
target_link_libraries(mpi_dump PRIVATE scalea-drg scalea-overheads)
add_executable(mpi_throttle ${CMAKE_CURRENT_LIST_DIR}/mpi_throttle.c)
target_link_libraries(mpi_throttle PRIVATE MPI::MPI_C)
set_target_properties(mpi_throttle PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

set(_mpi_check ${CMAKE_CURRENT_LIST_DIR}/check_mpi.py)
set(_mpi_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
function(scalea_mpi_test name)
  scalea_test_tmpdir(_tmp mpi.${name})
  add_test(NAME mpi.${name}
    COMMAND ${Python3_EXECUTABLE} ${_mpi_check} --bin ${CMAKE_BINARY_DIR}/bin
            --lib ${CMAKE_BINARY_DIR}/lib --mpirun ${MPIEXEC_EXECUTABLE}
            --workdir ${_tmp} ${ARGN})
  set_tests_properties(mpi.${name} PROPERTIES ENVIRONMENT "${_mpi_env}" LABELS "integration;mpi"
                       TIMEOUT 90 RUN_SERIAL TRUE)
endfunction()

scalea_mpi_test(planted.np1 planted --np 1)
scalea_mpi_test(planted.np2 planted --np 2)
scalea_mpi_test(planted.np4 planted --np 4)
scalea_mpi_test(planted.np2.preload planted --np 2 --preload)
scalea_mpi_test(unify.np8 unify --np 8)
scalea_mpi_test(hybrid.np2 hybrid --np 2)
scalea_mpi_test(multiple.np2 multiple --np 2)
if(TARGET mpi_fortran)
  scalea_mpi_test(fortran.np2 fortran --np 2)
endif()
if(TARGET mpi_fortran_f08)
  scalea_mpi_test(fortran_f08.np2 fortran_f08 --np 2)
endif()
scalea_mpi_test(abort.np2 abort --np 2)
scalea_mpi_test(nofinalize.np2 nofinalize --np 2)
scalea_mpi_test(late.np3 late --np 3)
scalea_mpi_test(throttle.np3 throttle --np 3)
scalea_mpi_test(sites.np2 sites --np 2)
scalea_mpi_test(self.np1 self --np 1)
scalea_mpi_test(self.np2 self --np 2)
scalea_mpi_test(hooks.np2 hooks --np 2)
# mpirun -np N scalea report: the serial output, byte for byte, at 2, 3 and 5 processes.
scalea_mpi_test(analysis.np4 analysis --np 4)
set_tests_properties(mpi.analysis.np4 PROPERTIES TIMEOUT 300)
# 64 ranks oversubscribed on this machine's cores, one node: the few-files layout.
scalea_mpi_test(containers.np64 containers --np 64)
set_tests_properties(mpi.containers.np64 PROPERTIES TIMEOUT 300)
