# tests/run/: `scalea run` end to end on real programs: signals passed on to the program
# (signal_app.c waits for one), ^C at a terminal. check_run.py drives them.
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

function(scalea_run_test name)
  add_test(NAME run.${name}
    COMMAND ${Python3_EXECUTABLE} ${_run}/check_run.py --bin ${CMAKE_BINARY_DIR}/bin
            --lib ${CMAKE_BINARY_DIR}/lib --workdir ${CMAKE_CURRENT_BINARY_DIR}/run-work ${ARGN})
  set_tests_properties(run.${name} PROPERTIES LABELS "integration;run" TIMEOUT 120)
endfunction()

foreach(sig TERM INT HUP USR1 USR2)
  scalea_run_test(signal.${sig} signal ${sig})
endforeach()
scalea_run_test(signal.tty_int tty-int)
