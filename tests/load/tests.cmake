# Load tests: 64 threads on 2 cores, parallel regions nested 3 deep, 1,000,000 tasks,
# 100,000 distinct user regions, 10^7 events per thread. run_load.py runs load_app under the real
# tool, checks exact counts in the experiment (load_dump) and the process's peak RSS against the
# bound documented in docs/reliability.md. Included from tests/CMakeLists.txt.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "tests/load skipped: no Python 3")
  return()
endif()
add_executable(load_app ${CMAKE_CURRENT_LIST_DIR}/load_app.c)
target_link_libraries(load_app PRIVATE OpenMP::OpenMP_C scalea-omp)
target_compile_options(load_app PRIVATE -g)
add_executable(load_dump ${CMAKE_CURRENT_LIST_DIR}/load_dump.cpp)
target_link_libraries(load_dump PRIVATE scalea-drg)

foreach(case threads64 nested3 forkjoin400k tasks1m taskdeep200k regions100k events1e7)
  add_test(NAME load.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_load.py
            --bin ${CMAKE_BINARY_DIR}/bin --lib $<TARGET_FILE:scalea-omp> ${case})
  # RUN_SERIAL: the peak RSS and the time are measured on a quiet machine.
  set_tests_properties(load.${case} PROPERTIES LABELS "integration;load" TIMEOUT 120 RUN_SERIAL TRUE)
endforeach()
