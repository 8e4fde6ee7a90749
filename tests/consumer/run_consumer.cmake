# Installs the main build into a fresh prefix, then configures, builds and runs an external project
# (project/) that does find_package(scalea) and links scalea::scalea against that prefix only.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=.../project -DWORK_DIR=... -DC_COMPILER=... -P run_consumer.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: ${v} is not set")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/scalea/scalea.h include/scalea/scalea.hpp)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/scaleaConfig.cmake)
if(NOT config)
  message(FATAL_ERROR "the install has no scaleaConfig.cmake")
endif()

run("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

# It runs against the installed library, and the user API alone starts recording.
run("ldd" ldd ${WORK_DIR}/build/consumer)
string(REGEX MATCH "libscalea-omp.so => ([^ ]+)" _ "${last_out}")
if(NOT CMAKE_MATCH_1 MATCHES "^${prefix}/")
  message(FATAL_ERROR "the consumer does not use the installed library:\n${last_out}")
endif()
run("running the consumer" ${CMAKE_COMMAND} -E env SCALEA_OUTPUT=${WORK_DIR}/exp SCALEA_QUIET=1
  ${WORK_DIR}/build/consumer)
if(NOT last_out MATCHES "consumer: measuring=1")
  message(FATAL_ERROR "unexpected consumer output: ${last_out}")
endif()
if(NOT EXISTS ${WORK_DIR}/exp/meta.json)
  message(FATAL_ERROR "the consumer wrote no experiment in ${WORK_DIR}/exp")
endif()
file(READ ${WORK_DIR}/exp/meta.json meta)
if(NOT meta MATCHES "\"complete\": *true")
  message(FATAL_ERROR "the consumer's experiment is not complete:\n${meta}")
endif()
message(STATUS "consumer: installed package found, built, ran, experiment written")
file(REMOVE_RECURSE ${WORK_DIR})
