# The address-to-source resolver (drg/src/symbols.cpp) on fixtures built here: a shared library
# (C + C++) and the same program as PIE and non-PIE executable, tail calls, stripped copies.
# Fixtures: a shared library (C + C++) and the same program as PIE and non-PIE executable.
# They are always -O0 -g, whatever the build type, so the marked lines keep their own code.
set(_symfix_data ${CMAKE_CURRENT_LIST_DIR}/symbols_data)
add_library(scalea_symfixture_lib SHARED
  ${_symfix_data}/symfixture_lib.c ${_symfix_data}/symfixture_cpp.cpp)
set_target_properties(scalea_symfixture_lib PROPERTIES OUTPUT_NAME symfixture_lib)
target_compile_options(scalea_symfixture_lib PRIVATE -O0 -g)

add_executable(scalea_symfixture_pie ${_symfix_data}/symfixture_main.c)
set_target_properties(scalea_symfixture_pie PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_compile_options(scalea_symfixture_pie PRIVATE -O0 -g -fPIE)
target_link_options(scalea_symfixture_pie PRIVATE -pie)
target_link_libraries(scalea_symfixture_pie PRIVATE scalea_symfixture_lib)

add_executable(scalea_symfixture_nopie ${_symfix_data}/symfixture_main.c)
set_target_properties(scalea_symfixture_nopie PROPERTIES POSITION_INDEPENDENT_CODE OFF)
target_compile_options(scalea_symfixture_nopie PRIVATE -O0 -g -fno-pie)
target_link_options(scalea_symfixture_nopie PRIVATE -no-pie)
target_link_libraries(scalea_symfixture_nopie PRIVATE scalea_symfixture_lib)

# Tail calls need the optimiser: -O2 (and -g for the lines the test expects).
add_executable(scalea_symfixture_tail ${_symfix_data}/symfixture_tail.c)
target_compile_options(scalea_symfixture_tail PRIVATE -O2 -g -foptimize-sibling-calls)
target_link_libraries(scalea_symfixture_tail PRIVATE scalea_symfixture_lib)

# Stripped copies (same layout, no .symtab, no DWARF; .dynsym survives) for the fallback paths.
set(_symfix_stripped ${CMAKE_CURRENT_BINARY_DIR}/symfixture_stripped)
# The fixtures are data for the resolver (their ELF layout, lines and tail jumps), not code under
# test: no sanitizer in them (TSan's function-exit hooks would turn the tail jump into a call).
foreach(_fix scalea_symfixture_lib scalea_symfixture_pie scalea_symfixture_nopie scalea_symfixture_tail)
  target_compile_options(${_fix} PRIVATE -fno-sanitize=all)
  target_link_options(${_fix} PRIVATE -fno-sanitize=all)
endforeach()

add_custom_command(
  OUTPUT ${_symfix_stripped}/libsymfixture_lib.so ${_symfix_stripped}/symfixture_pie
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_symfix_stripped}
  COMMAND ${CMAKE_STRIP} --strip-all -o ${_symfix_stripped}/libsymfixture_lib.so
          $<TARGET_FILE:scalea_symfixture_lib>
  COMMAND ${CMAKE_STRIP} --strip-all -o ${_symfix_stripped}/symfixture_pie
          $<TARGET_FILE:scalea_symfixture_pie>
  DEPENDS scalea_symfixture_lib scalea_symfixture_pie
  COMMENT "Stripping symbols fixtures")
add_custom_target(scalea_symfixture_stripped
  DEPENDS ${_symfix_stripped}/libsymfixture_lib.so ${_symfix_stripped}/symfixture_pie)

add_executable(scalea_symbols_test ${CMAKE_CURRENT_LIST_DIR}/symbols_test.cpp)
target_link_libraries(scalea_symbols_test PRIVATE scalea_symbols GTest::gtest_main)
target_compile_definitions(scalea_symbols_test PRIVATE
  SYMFIX_SOURCE_DIR="${_symfix_data}"
  SYMFIX_PIE="$<TARGET_FILE:scalea_symfixture_pie>"
  SYMFIX_NOPIE="$<TARGET_FILE:scalea_symfixture_nopie>"
  SYMFIX_TAIL="$<TARGET_FILE:scalea_symfixture_tail>"
  SYMFIX_LIB="$<TARGET_FILE:scalea_symfixture_lib>"
  SYMFIX_STRIPPED_LIB="${_symfix_stripped}/libsymfixture_lib.so"
  SYMFIX_STRIPPED_PIE="${_symfix_stripped}/symfixture_pie")
add_dependencies(scalea_symbols_test
  scalea_symfixture_pie scalea_symfixture_nopie scalea_symfixture_tail scalea_symfixture_stripped)
add_test(NAME unit.symbols COMMAND scalea_symbols_test)
set_tests_properties(unit.symbols PROPERTIES LABELS unit)
