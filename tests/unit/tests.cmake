# Unit tests of the in-process recorder and its adapters, driven by synthetic events (no OpenMP
# runtime): the OMPT callbacks are called directly, with a clock the test sets.
add_executable(scalea_collect_test ${CMAKE_CURRENT_LIST_DIR}/ompt_events_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/recorder_roundtrip_test.cpp ${CMAKE_CURRENT_LIST_DIR}/throttle_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format_tables_test.cpp ${CMAKE_CURRENT_LIST_DIR}/settings_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_test.cpp ${CMAKE_CURRENT_LIST_DIR}/tool_heap_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/online_tuner_test.cpp
  ${PROJECT_SOURCE_DIR}/collect/core/tool_heap.cpp)
target_link_libraries(scalea_collect_test PRIVATE scalea-recorder scalea-drg GTest::gtest_main)
target_compile_definitions(scalea_collect_test PRIVATE SCALEA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
gtest_discover_tests(scalea_collect_test TEST_PREFIX "unit.collect." DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS unit)

# The files the writer makes for one recorded state, against tests/unit/golden/ (its own process:
# the recorder is process-wide).
add_executable(scalea_collect_golden_test ${CMAKE_CURRENT_LIST_DIR}/output_golden_test.cpp)
target_link_libraries(scalea_collect_golden_test PRIVATE scalea-recorder GTest::gtest_main)
target_compile_definitions(scalea_collect_golden_test PRIVATE
  SCALEA_GOLDEN_DIR="${CMAKE_CURRENT_LIST_DIR}/golden")
add_test(NAME unit.collect.output_golden COMMAND scalea_collect_golden_test)
set_tests_properties(unit.collect.output_golden PROPERTIES LABELS unit)

# Adding a core metric is one row: the recorder and drg compiled again with a fake row
# (fake_metric.hpp, included first into every source of this build). Built in the normal tree
# only: it compiles the recorder and drg a second time, 76 s of the 900 s of CPU a sanitizer tree
# takes, for a check of tables that does not need a sanitizer.
find_package(nlohmann_json REQUIRED)
find_package(Boost REQUIRED)
if(NOT SCALEA_SANITIZE)
  add_library(scalea-fake-metric STATIC ${SCALEA_COLLECT_SOURCES} ${SCALEA_DRG_SOURCES})
  target_compile_options(scalea-fake-metric PUBLIC -include ${CMAKE_CURRENT_LIST_DIR}/fake_metric.hpp)
  target_link_libraries(scalea-fake-metric PUBLIC scalea-recorder-settings nlohmann_json::nlohmann_json
    Boost::headers PRIVATE scalea_symbols)
  add_executable(scalea_fake_metric_test ${CMAKE_CURRENT_LIST_DIR}/fake_metric_test.cpp)
  target_link_libraries(scalea_fake_metric_test PRIVATE scalea-fake-metric GTest::gtest_main)
  add_test(NAME unit.collect.fake_metric COMMAND scalea_fake_metric_test)
  set_tests_properties(unit.collect.fake_metric PROPERTIES LABELS unit)
endif()

# Debugging aids (tests/tools): a tracing OMPT tool and a replayer that feeds its traces to the
# adapter above (docs/architecture.md, "Finding a mishandled event order").
add_library(scalea-ompt-trace SHARED ${PROJECT_SOURCE_DIR}/tests/tools/ompt_trace.c)
add_executable(ompt_replay ${PROJECT_SOURCE_DIR}/tests/tools/ompt_replay.cpp)
target_include_directories(ompt_replay PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(ompt_replay PRIVATE scalea-recorder)
# A real event order that the adapter once mishandled (libomp 14, 3-deep nesting; see
# docs/reliability.md, finding 4): replayed, it must give no anomaly.
add_test(NAME unit.collect.replay.nested3
  COMMAND sh -c "gzip -dc '${PROJECT_SOURCE_DIR}/tests/tools/traces/nested3-libomp14.txt.gz' | '$<TARGET_FILE:ompt_replay>' - --quiet")
set_tests_properties(unit.collect.replay.nested3 PROPERTIES LABELS unit)
# A league of two teams on the host, each with a nested parallel loop of two threads: four rounds of
# `teams distribute parallel for num_teams(2) thread_limit(2) reduction(+ : s)` over 64 iterations
# of usleep(1000), OMP_NUM_THREADS=4 KMP_TEAMS_THREAD_LIMIT=8, as libomp 14 and 19 report it
# (docs/architecture.md, "OMPT event orders"): replayed, it must give no anomaly.
foreach(_rt 14 19)
  add_test(NAME unit.collect.replay.teams${_rt}
    COMMAND sh -c "gzip -dc '${PROJECT_SOURCE_DIR}/tests/tools/traces/teams-libomp${_rt}.txt.gz' | '$<TARGET_FILE:ompt_replay>' - --quiet")
  set_tests_properties(unit.collect.replay.teams${_rt} PROPERTIES LABELS unit)
endforeach()

# No product function over 120 lines (80 in report/) without the reason for its length in a
# "Long:" comment above it (scripts/long_functions.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME unit.long_functions
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/long_functions.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(unit.long_functions PROPERTIES LABELS unit)
endif()

# The product's sources formatted as .clang-format says (scripts/check_format.sh, clang-format 14).
add_test(NAME unit.format COMMAND ${PROJECT_SOURCE_DIR}/scripts/check_format.sh)
set_tests_properties(unit.format PROPERTIES LABELS unit)
