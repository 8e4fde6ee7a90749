# Post-run address-to-source resolver (libdw). Included from drg/CMakeLists.txt.
set(SCALEA_SYMBOLS_DIR ${CMAKE_CURRENT_LIST_DIR})

find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)

add_library(scalea_symbols STATIC ${SCALEA_SYMBOLS_DIR}/src/symbols.cpp)
target_include_directories(scalea_symbols PUBLIC ${SCALEA_SYMBOLS_DIR}/include)
target_compile_features(scalea_symbols PUBLIC cxx_std_17)
target_link_libraries(scalea_symbols PRIVATE PkgConfig::LIBDW)
set_target_properties(scalea_symbols PROPERTIES POSITION_INDEPENDENT_CODE ON)
# Its tests and fixtures: tests/drg/symbols.cmake.
