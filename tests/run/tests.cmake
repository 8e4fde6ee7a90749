# tests/run/: `scalea run` end to end on real programs: signals passed on to the program
# (signal_app.c waits for one), ^C at a terminal; the tool preloaded at the program's start
# (start_app.c: an OpenMP program, the same without OpenMP, a static one, a set-user-ID copy,
# CPython). check_run.py drives them.
find_package(OpenMP REQUIRED)
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "tests/run skipped: no Python 3")
  return()
endif()
set(_run ${CMAKE_CURRENT_LIST_DIR})
set(_run_bin ${CMAKE_BINARY_DIR}/bin/run)

add_executable(run_signal_app ${_run}/signal_app.c)
set_target_properties(run_signal_app PROPERTIES OUTPUT_NAME signal_app RUNTIME_OUTPUT_DIRECTORY ${_run_bin})
target_compile_options(run_signal_app PRIVATE -g)
target_link_libraries(run_signal_app PRIVATE OpenMP::OpenMP_C)

# heap_app: frees its arrays at every step (the tool must not change how the heap is trimmed).
add_executable(run_heap_app ${_run}/heap_app.c)
set_target_properties(run_heap_app PROPERTIES OUTPUT_NAME heap_app RUNTIME_OUTPUT_DIRECTORY ${_run_bin})
target_compile_options(run_heap_app PRIVATE -g)
target_link_libraries(run_heap_app PRIVATE OpenMP::OpenMP_C)

# start_app: with OpenMP, without (start_app_plain), and statically linked where libc.a exists.
add_executable(run_start_app ${_run}/start_app.c)
target_link_libraries(run_start_app PRIVATE OpenMP::OpenMP_C)
add_executable(run_start_app_plain ${_run}/start_app.c)
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_LINK_OPTIONS -static)
check_c_source_compiles("int main(void) { return 0; }" SCALEA_HAVE_STATIC_LIBC)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
set(_start_apps run_start_app run_start_app_plain)
# Not under a sanitizer: its runtime is a shared library and cannot be linked statically.
if(SCALEA_HAVE_STATIC_LIBC AND NOT SCALEA_SANITIZE)
  add_executable(run_start_app_static ${_run}/start_app.c)
  target_link_options(run_start_app_static PRIVATE -static)
  list(APPEND _start_apps run_start_app_static)
endif()
foreach(t ${_start_apps})
  string(REPLACE "run_" "" _name ${t})
  set_target_properties(${t} PROPERTIES OUTPUT_NAME ${_name} RUNTIME_OUTPUT_DIRECTORY ${_run_bin})
  target_compile_options(${t} PRIVATE -g)
endforeach()

function(scalea_run_test name)
  scalea_test_tmpdir(_tmp run.${name})
  add_test(NAME run.${name}
    COMMAND ${Python3_EXECUTABLE} ${_run}/check_run.py --bin ${CMAKE_BINARY_DIR}/bin
            --lib ${CMAKE_BINARY_DIR}/lib --workdir ${_tmp} ${ARGN})
  set_tests_properties(run.${name} PROPERTIES LABELS "integration;run" TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()

foreach(sig TERM INT HUP USR1 USR2)
  scalea_run_test(signal.${sig} signal ${sig})
endforeach()
scalea_run_test(signal.tty_int tty-int)
foreach(scenario start plain python static setuid)
  scalea_run_test(preload.${scenario} ${scenario})
endforeach()
scalea_run_test(affinity.omp affinity-omp)
scalea_run_test(heap heap)

# An MPI program built with -finstrument-functions, not linked with the tool; the affinity of
# MPI ranks (apps/mpi/mpi_hybrid).
find_package(MPI COMPONENTS C)
if(MPI_C_FOUND AND TARGET scalea-mpi)
  add_executable(run_mpi_functions ${_run}/mpi_functions.c)
  set_target_properties(run_mpi_functions PROPERTIES OUTPUT_NAME mpi_functions
    RUNTIME_OUTPUT_DIRECTORY ${_run_bin} ENABLE_EXPORTS ON)
  target_compile_options(run_mpi_functions PRIVATE -g -finstrument-functions)
  target_link_libraries(run_mpi_functions PRIVATE MPI::MPI_C)
  set(_run_mpi_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
  scalea_run_test(mpi.functions mpi-functions --mpirun ${MPIEXEC_EXECUTABLE})
  scalea_run_test(affinity.mpi affinity-mpi --mpirun ${MPIEXEC_EXECUTABLE})
  set_tests_properties(run.mpi.functions run.affinity.mpi PROPERTIES ENVIRONMENT "${_run_mpi_env}"
                       RUN_SERIAL TRUE)
endif()
