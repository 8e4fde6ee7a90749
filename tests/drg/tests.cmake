# tests/drg: unit tests of the drg/ library (literal graphs, loader, corpus replay) and the loader
# fuzz target. Included from tests/CMakeLists.txt.
set(_drg_tests ${CMAKE_CURRENT_LIST_DIR})

add_executable(scalea_drg_test
  ${_drg_tests}/drg_graph_test.cpp
  ${_drg_tests}/drg_loader_test.cpp
  ${_drg_tests}/container_test.cpp
  ${_drg_tests}/flat_map_test.cpp
  ${_drg_tests}/crc_test.cpp
  ${_drg_tests}/creatable_test.cpp
  ${_drg_tests}/meta_test.cpp
  ${_drg_tests}/region_key_test.cpp
  ${_drg_tests}/names_test.cpp
  ${_drg_tests}/read_ahead_test.cpp)
# read_ahead_test.cpp tests a header private to drg/src.
target_include_directories(scalea_drg_test PRIVATE ${_drg_tests} ${PROJECT_SOURCE_DIR}/drg/src)
target_link_libraries(scalea_drg_test PRIVATE scalea-drg GTest::gtest_main)
target_compile_definitions(scalea_drg_test PRIVATE SCALEA_DRG_CORPUS="${_drg_tests}/corpus"
  SCALEA_GOLDEN_META="${PROJECT_SOURCE_DIR}/tests/unit/golden/meta.json")
gtest_discover_tests(scalea_drg_test TEST_PREFIX unit.drg. DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# drg_stream_check DIR...: RankFiles (one rank file at a time) against load_experiment.
add_executable(drg_stream_check ${_drg_tests}/stream_check.cpp)
target_link_libraries(drg_stream_check PRIVATE scalea-drg)

# Writes the hand-made bad inputs into tests/drg/corpus (run by hand when adding cases):
#   build/bin/drg_make_corpus tests/drg/corpus [--seeds DIR]
add_executable(drg_make_corpus ${_drg_tests}/make_corpus.cpp)
target_include_directories(drg_make_corpus PRIVATE ${_drg_tests})
target_link_libraries(drg_make_corpus PRIVATE scalea-drg)

if(SCALEA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SCALEA_FUZZ needs clang (libFuzzer)")
  endif()
  # The loader compiled again with coverage instrumentation and the sanitizers.
  find_package(nlohmann_json REQUIRED)
  find_package(Boost 1.71 REQUIRED)
  add_library(scalea-drg-fuzz STATIC ${SCALEA_DRG_SOURCES})
  target_include_directories(scalea-drg-fuzz PUBLIC ${PROJECT_SOURCE_DIR}/drg/include)
  target_link_libraries(scalea-drg-fuzz PUBLIC nlohmann_json::nlohmann_json Boost::headers PRIVATE scalea_symbols)
  target_compile_options(scalea-drg-fuzz PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g -O1)
  add_executable(fuzz_loader ${_drg_tests}/fuzz_loader.cpp)
  target_include_directories(fuzz_loader PRIVATE ${_drg_tests})
  target_compile_options(fuzz_loader PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g -O1)
  target_link_options(fuzz_loader PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_loader PRIVATE scalea-drg-fuzz)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/symbols.cmake)
