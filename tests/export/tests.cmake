# tests/export/: scalea export (csv, json, dot, hatchet, extrap, html), the HTML report in headless
# Chromium, scalea diff, the findings and the one-line errors. check_exports.py runs the planted
# program export_app under the tool at p = 1, 2 and 4 (fixture export.runs), then each test reads
# an export back with its real consumer (python csv/json, jq, Graphviz dot, Chromium) or checks
# the documented structure (Hatchet literal; Extra-P JSON Lines as extrap_reader.py, which follows
# Extra-P's --json reader, reads it; extrap_study exports a whole study). csv-sampled and
# hatchet_sampled run apps/omp/sampled (functions of known CPU time) and check its call-path samples
# in the CSV and Hatchet exports. See docs/exports.md.
find_package(Python3 COMPONENTS Interpreter)
find_package(OpenMP COMPONENTS C)
if(NOT Python3_Interpreter_FOUND OR NOT OpenMP_C_FOUND)
  message(STATUS "tests/export skipped: no Python 3 or OpenMP C compiler")
  return()
endif()

add_executable(export_app ${CMAKE_CURRENT_LIST_DIR}/export_app.c)
target_compile_options(export_app PRIVATE -g -fno-optimize-sibling-calls)
target_link_libraries(export_app PRIVATE OpenMP::OpenMP_C)
set_target_properties(export_app PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/export)

# export.runs writes the experiments into its directory; every other test reads them there
# (--runs) and writes into its own (--workdir).
scalea_test_tmpdir(_ex_runs export.runs)
set(_ex_cmd ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_exports.py
    --scalea $<TARGET_FILE:scalea> --tool $<TARGET_FILE:scalea-omp>
    --app $<TARGET_FILE:export_app> --runs ${_ex_runs})
if(TARGET omp_sampled)
  list(APPEND _ex_cmd --sampled-app $<TARGET_FILE:omp_sampled>)
endif()

add_test(NAME export.runs COMMAND ${_ex_cmd} --workdir ${_ex_runs} runs)
set_tests_properties(export.runs PROPERTIES FIXTURES_SETUP export_runs
                     LABELS "integration;export" TIMEOUT 120)
foreach(check formats csv csv-sampled json dot hatchet hatchet_sampled extrap extrap_study html diff
              findings errors)
  scalea_test_tmpdir(_ex_tmp export.${check})
  add_test(NAME export.${check} COMMAND ${_ex_cmd} --workdir ${_ex_tmp} ${check})
  set_tests_properties(export.${check} PROPERTIES FIXTURES_REQUIRED export_runs
                       LABELS "integration;export" TIMEOUT 120 SKIP_RETURN_CODE 77)
endforeach()
