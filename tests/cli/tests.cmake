# Bad input to every scalea subcommand: damaged experiments (missing, empty, truncated,
# wrong version, huge numbers, the loader corpus of tests/drg/corpus), wrong and out-of-range flags,
# bad SCALEA_* settings. Each must give exit status 2 and one line on stderr (settings: one
# warning, the program runs), never a crash or a hang. And very deep call trees, which every
# command must read. Included from
# tests/CMakeLists.txt; needs load_app from tests/load.
set(_cli_run ${CMAKE_CURRENT_LIST_DIR}/run_cli_bad.sh)
set(_cli_corpus ${CMAKE_CURRENT_LIST_DIR}/../drg/corpus)
foreach(group experiments flags env names)
  add_test(NAME cli.bad_input.${group} COMMAND ${_cli_run} ${CMAKE_BINARY_DIR}/bin ${_cli_corpus} ${group})
  set_tests_properties(cli.bad_input.${group} PROPERTIES LABELS "integration;cli" TIMEOUT 300)
endforeach()
# Very deep call trees (a recursion): every command reads them, each within a bound on time and
# peak RSS (seconds, MiB). Measured on the development machine (2 cores) at 100,000 levels: at
# most 3.6 s and 500 MiB per command; call-path strings, as before they were interned, needed
# O(depth^2): 8,000 levels took 3.4-7.4 GB (docs/reliability.md, finding 3). CI runs 20,000
# levels (about 14 s instead of 70 for the same code): a quadratic cost there is some 8 GB, far
# beyond the bounds, and 18,000 of the paths are printed shortened (beyond 2,000 levels).
# Under a sanitizer (2-3x the memory, up to 15x the time) the bounds would measure the sanitizer:
# the commands get 15 minutes each and no memory bound, as the load tests check no bound there.
# The shallow case is 300 levels there instead of 1,000: the full call paths the JSON outputs
# print grow with depth^2 (1,000 levels: 2.5-8 s per JSON command under ASan, 40 s in all), and
# 300 levels run the same code.
if(SCALEA_SANITIZE)
  set(_deep_small 300)
  set(_deep_small_args deep 300)
  set(_deep_large deep 20000)
  set(_deep_env SCALEA_CLI_TIMEOUT=900)
else()
  set(_deep_small 1000)
  set(_deep_small_args deep 1000 10 512)
  set(_deep_large deep 20000 10 400)
  set(_deep_env "")
endif()
add_test(NAME cli.deep_tree.${_deep_small} COMMAND ${_cli_run} ${CMAKE_BINARY_DIR}/bin ${_cli_corpus} ${_deep_small_args})
set_tests_properties(cli.deep_tree.${_deep_small} PROPERTIES LABELS "integration;cli" TIMEOUT 900
                     ENVIRONMENT "${_deep_env}")
add_test(NAME cli.deep_tree.20000 COMMAND ${_cli_run} ${CMAKE_BINARY_DIR}/bin ${_cli_corpus} ${_deep_large})
set_tests_properties(cli.deep_tree.20000 PROPERTIES LABELS "integration;cli" TIMEOUT 1800
                     ENVIRONMENT "${_deep_env}")

# What the report says around the table: a reference that does not fit (refused unless --force),
# an estimated program start, threads sharing CPUs, no trivial findings, cache --region FILE:LINE,
# the MPI view.
find_package(MPI COMPONENTS C QUIET)
set(_cli_mpirun "")
if(MPI_C_FOUND AND TARGET mpi_shapes AND TARGET scalea-mpi)
  set(_cli_mpirun "${MPIEXEC_EXECUTABLE}")
endif()
add_test(NAME cli.report_context COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_report.sh ${CMAKE_BINARY_DIR}/bin ${_cli_mpirun})
set_tests_properties(cli.report_context PROPERTIES LABELS "integration;cli" TIMEOUT 300 RUN_SERIAL TRUE)

# Two threads on one CPU (taskset): the spinning of libomp's waiting threads and the threads'
# wait for a CPU are named in the report (check_shared_cpus.sh).
scalea_test_tmpdir(_shared_cpus cli.shared_cpus)
add_test(NAME cli.shared_cpus
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_shared_cpus.sh ${CMAKE_BINARY_DIR}/bin ${_shared_cpus})
set_tests_properties(cli.shared_cpus PROPERTIES LABELS "integration;cli" TIMEOUT 120
                     SKIP_RETURN_CODE 77)

# scalea tune on a planted schedule(runtime) loop: the rules' variants, the choice beyond the
# noise, outputs checked (--expect, --check), bad input (check_tune.sh, docs/tuning.md).
scalea_test_tmpdir(_tune cli.tune)
add_test(NAME cli.tune COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_tune.sh ${CMAKE_BINARY_DIR}/bin ${_tune})
set_tests_properties(cli.tune PROPERTIES LABELS "integration;cli" TIMEOUT 300)

# The on-line tuner on a planted schedule(runtime) loop in a time-step loop, with libomp 14 and
# 19: the program's imbalance halved, its output unchanged, a schedule(static) loop never changed,
# the report's block (check_online_tune.sh, docs/tuning.md "On-line tuning").
scalea_test_tmpdir(_online_tune cli.online_tune)
add_test(NAME cli.online_tune COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_online_tune.sh
  ${CMAKE_BINARY_DIR}/bin ${_online_tune} "${SCALEA_LIBOMP19_DIR}")
set_tests_properties(cli.online_tune PROPERTIES LABELS "integration;cli" TIMEOUT 300)

# The rank files read ahead on every core, or on one (taskset): the same outputs, byte for byte,
# and the same first error in file order (docs/drg.md, "On every core"). Needs drg_gen (bench/drg).
add_test(NAME cli.readers COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_readers.sh ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(cli.readers PROPERTIES LABELS "integration;cli" TIMEOUT 300)

# The messages of what cannot be measured or shown, and of wrong command lines (docs/user-guide.md,
# "When the tool cannot work"): each message and exit status, under the real tool with real
# programs (check_messages.sh). Needs apps/omp/phases.
foreach(group output top killed words settings docs sampling)
  scalea_test_tmpdir(_messages cli.messages.${group})
  add_test(NAME cli.messages.${group}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_messages.sh ${CMAKE_BINARY_DIR}/bin ${_messages} ${group})
  set_tests_properties(cli.messages.${group} PROPERTIES LABELS "integration;cli" TIMEOUT 60)
endforeach()
