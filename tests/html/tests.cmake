# tests/html/: the HTML report (`scalea report --html`, `scalea export --format html`) in a real
# headless Chromium driven through the DevTools protocol (cdp.py: the standard library over
# --remote-debugging-pipe; no npm module). check_html.py makes the experiments under `scalea run`
# (fixture html.runs: tests/export's export_app at p = 1 and 4, apps/omp's constructs and its
# shapes pipeline (LU-shaped) at p = 1 and 2, a scaling
# study, and a synthetic 1,024-rank experiment from bench/drg's drg_gen), then each test loads a
# page and checks that it draws with no console error and no network request, that its panes
# react to clicks and keys, and that screenshots of each view are not blank. Without Chromium the
# tests report SKIP (77). See docs/report.md.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND OR NOT TARGET export_app OR NOT TARGET omp_constructs OR NOT TARGET omp_shapes
   OR NOT TARGET drg_gen)
  message(STATUS "tests/html skipped: needs Python 3, export_app, omp_constructs, omp_shapes and drg_gen")
  return()
endif()

# html.runs writes the experiments into its directory; every other test reads them there (--runs)
# and writes into its own (--workdir).
scalea_test_tmpdir(_html_runs html.runs)
set(_html_cmd ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_html.py
    --scalea $<TARGET_FILE:scalea> --app $<TARGET_FILE:export_app>
    --omp-app $<TARGET_FILE:omp_constructs>
    --shapes-app $<TARGET_FILE:omp_shapes> --gen $<TARGET_FILE:drg_gen> --runs ${_html_runs})

add_test(NAME html.runs COMMAND ${_html_cmd} --workdir ${_html_runs} runs)
# It records timed programs (the pipeline's spin-wait is planted by timing): alone, so that
# `ctest -j` does not run a CPU-bound test beside it.
set_tests_properties(html.runs PROPERTIES FIXTURES_SETUP html_runs
                     LABELS "integration;html" TIMEOUT 300 RUN_SERIAL TRUE)
foreach(check experiment pipeline single study large errors)
  scalea_test_tmpdir(_html_tmp html.${check})
  add_test(NAME html.${check} COMMAND ${_html_cmd} --workdir ${_html_tmp} ${check})
  set_tests_properties(html.${check} PROPERTIES FIXTURES_REQUIRED html_runs
                       LABELS "integration;html" TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()
