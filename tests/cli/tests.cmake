# Bad input to every scalea subcommand (issue 10): damaged experiments (missing, empty, truncated,
# wrong version, huge numbers, the loader corpus of tests/drg/corpus), wrong and out-of-range flags,
# bad SCALEA_* settings, very deep call trees. Each must give exit status 2 and one line on stderr
# (settings: one warning, the program runs), never a crash or a hang. Included from
# tests/CMakeLists.txt; needs load_app from tests/load.
set(_cli_run ${CMAKE_CURRENT_LIST_DIR}/run_cli_bad.sh)
set(_cli_corpus ${CMAKE_CURRENT_LIST_DIR}/../drg/corpus)
foreach(group experiments flags env)
  add_test(NAME cli.bad_input.${group} COMMAND ${_cli_run} ${CMAKE_BINARY_DIR}/bin ${_cli_corpus} ${group})
  set_tests_properties(cli.bad_input.${group} PROPERTIES LABELS "integration;cli" TIMEOUT 300)
endforeach()
add_test(NAME cli.deep_tree.1000 COMMAND ${_cli_run} ${CMAKE_BINARY_DIR}/bin ${_cli_corpus} deep 1000)
set_tests_properties(cli.deep_tree.1000 PROPERTIES LABELS "integration;cli" TIMEOUT 300)
# A recursion 100,000 levels deep: drg reads it; report, export and diff refuse trees deeper than
# 2,000 levels with one line (call-path strings grow with depth squared; overheads/classify.cpp).
add_test(NAME cli.deep_tree.100000 COMMAND ${_cli_run} ${CMAKE_BINARY_DIR}/bin ${_cli_corpus} deep 100000)
set_tests_properties(cli.deep_tree.100000 PROPERTIES LABELS "integration;cli" TIMEOUT 600)
