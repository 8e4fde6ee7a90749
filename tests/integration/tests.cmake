# tests/integration/: the bundled apps (apps/omp/) run under the real tool and the real OpenMP
# runtime; each test checks the structure and the planted times the tool recorded. Every test is
# registered twice: omp14.* with the default runtime (Debian's libomp 14) and, when
# SCALEA_LIBOMP19_DIR is set, omp19.* with libomp 19 first on the library path (the harness then
# checks that the experiment really saw libomp 19).
set(_it ${CMAKE_CURRENT_LIST_DIR})

add_library(scalea-test-harness STATIC ${_it}/harness.cpp)
target_include_directories(scalea-test-harness PUBLIC ${_it})
target_link_libraries(scalea-test-harness PUBLIC scalea-drg scalea-overheads GTest::gtest)
set(_have_fortran 0)
if(TARGET omp_fortran_user)
  set(_have_fortran 1)
endif()
set(_have_gcc 0)
if(TARGET omp_imbalance_gcc)
  set(_have_gcc 1)
endif()
target_compile_definitions(scalea-test-harness PUBLIC
  SCALEA_BUILD_DIR="${CMAKE_BINARY_DIR}"
  SCALEA_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  SCALEA_APPS_DIR="${CMAKE_BINARY_DIR}/bin/omp"
  SCALEA_TOOL_LIB="$<TARGET_FILE:scalea-omp>"
  SCALEA_CLI="$<TARGET_FILE:scalea>"
  SCALEA_HAVE_FORTRAN=${_have_fortran}
  SCALEA_HAVE_GCC_APP=${_have_gcc})

# Everything the tests run.
set(_it_deps scalea scalea-omp)
foreach(app imbalance locks serial single nested tasks constructs userapi user_parallel cxxscope instrfn
            many_threads fortran_user imbalance_gcc)
  if(TARGET omp_${app})
    list(APPEND _it_deps omp_${app})
  endif()
endforeach()

# The throttling test's program (SCALEA_THROTTLE): a million calls of a tiny instrumented
# function; -rdynamic names the functions.
add_executable(omp_throttle_app ${_it}/throttle_app.c)
set_target_properties(omp_throttle_app PROPERTIES OUTPUT_NAME throttle_app
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/omp ENABLE_EXPORTS ON)
target_compile_options(omp_throttle_app PRIVATE -g -fno-optimize-sibling-calls -finstrument-functions)
target_link_libraries(omp_throttle_app PRIVATE scalea::scalea OpenMP::OpenMP_C)
list(APPEND _it_deps omp_throttle_app)

# instrfn built the same way but without linking the tool: its hooks bind to libc's empty ones
# unless the tool is preloaded (`scalea run`).
add_executable(omp_instrfn_plain ${PROJECT_SOURCE_DIR}/apps/omp/instrfn.c)
set_target_properties(omp_instrfn_plain PROPERTIES OUTPUT_NAME instrfn_plain
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/omp ENABLE_EXPORTS ON)
target_compile_options(omp_instrfn_plain PRIVATE -g -fno-optimize-sibling-calls -finstrument-functions)
target_link_libraries(omp_instrfn_plain PRIVATE OpenMP::OpenMP_C)
list(APPEND _it_deps omp_instrfn_plain)

# One test program built as bin/omp/<variant> for each variant (their flags set below).
function(scalea_it_variants source omp_target)
  foreach(variant ${ARGN})
    add_executable(omp_${variant} ${source})
    set_target_properties(omp_${variant} PROPERTIES OUTPUT_NAME ${variant}
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/omp)
    target_link_libraries(omp_${variant} PRIVATE ${omp_target})
    list(APPEND _it_deps omp_${variant})
  endforeach()
  set(_it_deps ${_it_deps} PARENT_SCOPE)
endfunction()

# The region-identity test's program (test_symbols.cpp): -O2 with the sibling-call optimisation
# that the apps turn off, built with and without -g (-g0 after the build type's -g).
scalea_it_variants(${_it}/inlined_regions.c OpenMP::OpenMP_C inlined_regions inlined_regions_g)
target_compile_options(omp_inlined_regions PRIVATE -O2 -g0 -foptimize-sibling-calls)

# A parallel region in a member function template of a class template with long arguments
# (test_symbols.cpp, labels): -O2, with -g (template_regions_g) and without.
scalea_it_variants(${_it}/template_regions.cpp OpenMP::OpenMP_CXX template_regions
  template_regions_g)
target_compile_options(omp_template_regions PRIVATE -O2 -g0)
# One parallel region in two instances of a function template (test_symbols.cpp, unique paths).
scalea_it_variants(${_it}/template_twins.cpp OpenMP::OpenMP_CXX template_twins)
target_compile_options(omp_template_twins PRIVATE -g)
target_compile_options(omp_template_regions_g PRIVATE -O2 -g)
target_compile_options(omp_inlined_regions_g PRIVATE -O2 -g -foptimize-sibling-calls)

# One program built in two directories (test_symbols.cpp): imbalance.c and planted.h copied into
# tree_a/ and tree_b/, each built as bin/omp/<tree>/imbalance, so that the runs' source files and
# modules have other paths and the same base names.
foreach(tree tree_a tree_b)
  set(_tree_src ${CMAKE_CURRENT_BINARY_DIR}/${tree})
  configure_file(${PROJECT_SOURCE_DIR}/apps/omp/imbalance.c ${_tree_src}/imbalance.c COPYONLY)
  configure_file(${PROJECT_SOURCE_DIR}/apps/omp/planted.h ${_tree_src}/planted.h COPYONLY)
  add_executable(omp_imbalance_${tree} ${_tree_src}/imbalance.c)
  set_target_properties(omp_imbalance_${tree} PROPERTIES OUTPUT_NAME imbalance
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin/omp/${tree})
  target_compile_options(omp_imbalance_${tree} PRIVATE -g -fno-optimize-sibling-calls)
  target_link_libraries(omp_imbalance_${tree} PRIVATE OpenMP::OpenMP_C)
  list(APPEND _it_deps omp_imbalance_${tree})
endforeach()

foreach(area parallel worksharing locks tasks nested userapi functions gcc many_threads throttle symbols
            light)
  set(exe scalea_it_${area})
  add_executable(${exe} ${_it}/test_${area}.cpp)
  target_link_libraries(${exe} PRIVATE scalea-test-harness GTest::gtest_main)
  add_dependencies(${exe} ${_it_deps})
  # CMake 3.25's gtest_discover_tests splits list-valued properties (LABELS a;b, an ENVIRONMENT
  # of two variables): list-valued ones are set by a ctest script run after the discovery.
  gtest_discover_tests(${exe} TEST_PREFIX omp14. DISCOVERY_MODE PRE_TEST
    TEST_LIST ${exe}_omp14 PROPERTIES TIMEOUT 300)
  set(_props ${CMAKE_CURRENT_BINARY_DIR}/${exe}_properties.cmake)
  set(_text "foreach(_t IN LISTS ${exe}_omp14)\n  set_tests_properties(\"\${_t}\" PROPERTIES LABELS \"integration;omp14\")\nendforeach()\n")
  if(SCALEA_LIBOMP19_DIR)
    gtest_discover_tests(${exe} TEST_PREFIX omp19. DISCOVERY_MODE PRE_TEST
      TEST_LIST ${exe}_omp19 PROPERTIES TIMEOUT 300)
    string(APPEND _text "foreach(_t IN LISTS ${exe}_omp19)\n  set_tests_properties(\"\${_t}\" PROPERTIES LABELS \"integration;omp19\" ENVIRONMENT \"LD_LIBRARY_PATH=${SCALEA_LIBOMP19_DIR};SCALEA_EXPECT_LIBOMP=19\")\nendforeach()\n")
  endif()
  file(WRITE ${_props} "${_text}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_props})
endforeach()
