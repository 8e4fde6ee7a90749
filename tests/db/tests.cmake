# tests/db/: the experiment database (scalea db, docs/database.md), every command against SQLite
# and against a real PostgreSQL server the test starts (Debian's postgresql package: initdb and
# pg_ctl in a temporary directory, as an unprivileged user) and stops, on experiments of real
# programs (apps/omp/imbalance, tests/study/study_app) under the real tool, and synthetic ones
# of bench/drg's generator for concurrency and faults. check_db.py says what each group checks.
# `sampled` stores apps/omp/sampled (functions of known CPU time) with its call-path samples.
# Each test takes a few seconds.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "tests/db skipped: no Python 3")
  return()
endif()
set(_db_cmd ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_db.py --bin ${CMAKE_BINARY_DIR}/bin
    --source ${PROJECT_SOURCE_DIR})
foreach(backend sqlite postgresql)
  foreach(group commands faults sampled)
    scalea_test_tmpdir(_db_tmp db.${backend}.${group})
    add_test(NAME db.${backend}.${group} COMMAND ${_db_cmd} --work ${_db_tmp} ${backend} ${group})
    set_tests_properties(db.${backend}.${group} PROPERTIES LABELS "integration;db" TIMEOUT 300)
  endforeach()
endforeach()
scalea_test_tmpdir(_db_tmp db.same_answers)
add_test(NAME db.same_answers COMMAND ${_db_cmd} --work ${_db_tmp} both same_answers)
set_tests_properties(db.same_answers PROPERTIES LABELS "integration;db" TIMEOUT 300)
# The database's site (scalea db html) in headless Chromium, with tests/html's harness: SKIP (77)
# without Chromium.
scalea_test_tmpdir(_db_tmp db.html)
add_test(NAME db.html COMMAND ${_db_cmd} --work ${_db_tmp} sqlite html)
set_tests_properties(db.html PROPERTIES LABELS "integration;db;html" TIMEOUT 300 SKIP_RETURN_CODE 77)
