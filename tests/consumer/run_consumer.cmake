# Installs the main build into a fresh prefix and uses it only, as a user or a packager would:
# - an external CMake project (project/) does find_package(scalea) and links scalea::scalea;
# - the same program built as a Makefile would, with pkg-config (scalea.pc), runs under the
#   installed `scalea run`, and the installed `scalea report` reads what it wrote;
# - the man pages of scalea and every command the installed scalea lists, the bash completion
#   (completing with the installed scalea) and the documentation are in the prefix, and the
#   installed --help and --version name them and what the build found.
# - a Fortran program built with pkg-config (scalea-fortran.pc) runs under the installed
#   `scalea run`, when scalea was built with a Fortran compiler (FORTRAN_COMPILER, "" if not);
#   skipped, and the .pc required absent, when it was not.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=.../project -DSCALEA_SOURCE=... -DWORK_DIR=...
#         -DC_COMPILER=... -DFORTRAN_COMPILER=... -DPKG_CONFIG=... -DBASH=... -DMAN_PAGES=ON|OFF
#         -P run_consumer.cmake
foreach(v BUILD_DIR SOURCE_DIR SCALEA_SOURCE WORK_DIR C_COMPILER FORTRAN_COMPILER PKG_CONFIG BASH
    MAN_PAGES)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: ${v} is not set")
  endif()
endforeach()
include(${SCALEA_SOURCE}/cmake/scalea_commands.cmake)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

function(require_files)
  foreach(f ${ARGN})
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "the install has no ${f}")
    endif()
  endforeach()
endfunction()

# The consumer binary runs against the installed library.
function(require_installed_library binary)
  run("ldd" ldd ${binary})
  string(REGEX MATCH "libscalea-omp.so => ([^ ]+)" _ "${last_out}")
  if(NOT CMAKE_MATCH_1 MATCHES "^${prefix}/")
    message(FATAL_ERROR "${binary} does not use the installed library:\n${last_out}")
  endif()
endfunction()

function(require_complete_experiment dir)
  if(NOT EXISTS ${dir}/meta.json)
    message(FATAL_ERROR "no experiment written in ${dir}")
  endif()
  file(READ ${dir}/meta.json meta)
  if(NOT meta MATCHES "\"complete\": *true")
    message(FATAL_ERROR "the experiment in ${dir} is not complete:\n${meta}")
  endif()
endfunction()

# find_package(scalea) and scalea::scalea; the user API alone starts recording.
function(check_find_package)
  file(GLOB_RECURSE config ${prefix}/*/scaleaConfig.cmake)
  if(NOT config)
    message(FATAL_ERROR "the install has no scaleaConfig.cmake")
  endif()
  run("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
  require_installed_library(${WORK_DIR}/build/consumer)
  run("running the consumer" ${CMAKE_COMMAND} -E env SCALEA_OUTPUT=${WORK_DIR}/exp SCALEA_QUIET=1
    ${WORK_DIR}/build/consumer)
  if(NOT last_out MATCHES "consumer: measuring=1")
    message(FATAL_ERROR "unexpected consumer output: ${last_out}")
  endif()
  require_complete_experiment(${WORK_DIR}/exp)
endfunction()

# A consumer built with pkg-config, linked to the installed library, run under the installed
# `scalea run` (its output must match OUTPUT) into EXPERIMENT; the installed `scalea report` must
# show REGION.
function(run_and_report binary experiment output region)
  require_installed_library(${binary})
  run("scalea run (installed) ${binary}" ${prefix}/bin/scalea run -o ${experiment} -- ${binary})
  if(NOT last_out MATCHES "${output}")
    message(FATAL_ERROR "unexpected output of ${binary} under scalea run: ${last_out}")
  endif()
  require_complete_experiment(${experiment})
  run("scalea report (installed) ${experiment}" ${prefix}/bin/scalea report ${experiment})
  if(NOT last_out MATCHES "${region}")
    message(FATAL_ERROR "scalea report does not show ${region}:\n${last_out}")
  endif()
endfunction()

# The same program compiled as a Makefile would, with pkg-config, run under the installed
# `scalea run`; the installed `scalea report` finds its region.
function(check_pkg_config)
  file(GLOB_RECURSE pc ${prefix}/*/pkgconfig/scalea.pc)  # lib/ or lib/<multiarch>/
  if(NOT pc)
    message(FATAL_ERROR "the install has no pkgconfig/scalea.pc")
  endif()
  get_filename_component(pc_dir "${pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pc_dir})
  run("pkg-config --cflags --libs scalea" ${PKG_CONFIG} --cflags --libs scalea)
  separate_arguments(flags UNIX_COMMAND "${last_out}")
  run("pkg-config --variable=libdir scalea" ${PKG_CONFIG} --variable=libdir scalea)
  string(STRIP "${last_out}" libdir)
  set(binary ${WORK_DIR}/consumer-pc)
  run("cc with pkg-config" ${C_COMPILER} ${SOURCE_DIR}/main.c -o ${binary} ${flags}
    -Wl,-rpath,${libdir})
  run_and_report(${binary} ${WORK_DIR}/exp-pc "consumer: measuring=1" consumer_region)
endfunction()

# A Fortran program, as a Makefile would build it: the module and both libraries from
# scalea-fortran.pc alone, run under the installed `scalea run`, its region in the report.
function(check_pkg_config_fortran)
  file(GLOB_RECURSE pc ${prefix}/*/pkgconfig/scalea-fortran.pc)
  if(FORTRAN_COMPILER STREQUAL "")
    if(pc)
      message(FATAL_ERROR "built without Fortran, the install has ${pc}")
    endif()
    message(STATUS "consumer: scalea built without a Fortran compiler: no scalea-fortran.pc checked")
    return()
  endif()
  if(NOT pc)
    message(FATAL_ERROR "the install has no pkgconfig/scalea-fortran.pc")
  endif()
  get_filename_component(pc_dir "${pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pc_dir})
  run("pkg-config --cflags --libs scalea-fortran" ${PKG_CONFIG} --cflags --libs scalea-fortran)
  if(NOT last_out MATCHES "-lscalea-fortran .*-lscalea-omp")
    message(FATAL_ERROR "pkg-config --libs scalea-fortran: not the module's library before the "
      "tool's: ${last_out}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${last_out}")
  run("pkg-config --variable=libdir scalea-fortran" ${PKG_CONFIG} --variable=libdir scalea-fortran)
  string(STRIP "${last_out}" libdir)
  set(binary ${WORK_DIR}/consumer-fortran)
  # The objects and the .mod of the compile stay out of the sources.
  file(MAKE_DIRECTORY ${WORK_DIR}/fortran)
  execute_process(COMMAND ${FORTRAN_COMPILER} ${SOURCE_DIR}/main.f90 -o ${binary} ${flags}
      -Wl,-rpath,${libdir}
    WORKING_DIRECTORY ${WORK_DIR}/fortran RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${FORTRAN_COMPILER} with pkg-config failed (${rc}):\n${out}\n${err}")
  endif()
  run_and_report(${binary} ${WORK_DIR}/exp-f "consumer: fortran ran T" consumer_fortran_region)
  message(STATUS "consumer: a Fortran program built with pkg-config scalea-fortran ran")
endfunction()

# A page for scalea and for each command (and each command's commands) the installed scalea
# lists, naming the installed documentation, never the sources'.
function(check_man_pages)
  set(pages scalea)
  scalea_subcommands(commands ${prefix}/bin/scalea "")
  while(commands)
    list(POP_FRONT commands cmd _)
    list(APPEND pages scalea-${cmd})
    scalea_subcommands(subs ${prefix}/bin/scalea "${cmd}")
    while(subs)
      list(POP_FRONT subs sub _)
      list(APPEND pages scalea-${cmd}-${sub})
    endwhile()
  endwhile()
  foreach(page ${pages})
    require_files(share/man/man1/${page}.1)
    file(READ ${prefix}/share/man/man1/${page}.1 text)
    string(REPLACE "\\-" "-" text "${text}")  # help2man's '-'
    string(FIND "${text}" "${SCALEA_SOURCE}/docs" sources)
    if(NOT sources EQUAL -1)
      message(FATAL_ERROR "${page}.1 names the sources' docs:\n${text}")
    endif()
  endforeach()
  # Made at build time for the configured prefix, they name this install's documentation (the
  # prefix given to cmake --install), never the sources' (the build's --help names those; above).
  foreach(page scalea-export scalea-report scalea-db scalea-db-query)
    file(READ ${prefix}/share/man/man1/${page}.1 text)
    string(REPLACE "\\-" "-" text "${text}")
    string(FIND "${text}" "${prefix}/share/doc/scalea/" installed)
    if(installed EQUAL -1)
      message(FATAL_ERROR "${page}.1 does not name ${prefix}/share/doc/scalea/:\n${text}")
    endif()
  endforeach()
  list(LENGTH pages n)
  message(STATUS "consumer: ${n} man pages")
endfunction()

# The installed completion completes commands and options with the installed scalea.
function(check_completion)
  set(script ${prefix}/share/bash-completion/completions/scalea)
  require_files(share/bash-completion/completions/scalea)
  set(scalea ${prefix}/bin/scalea)
  # One command a line: a ';' would split the argument into a CMake list.
  set(complete "source ${script}\n")
  foreach(words "1:${scalea} rep" "2:${scalea} export --for" "3:${scalea} db ''")
    string(REGEX MATCH "^(.):(.*)$" _ "${words}")
    string(APPEND complete "COMP_WORDS=(${CMAKE_MATCH_2})\nCOMP_CWORD=$((\${#COMP_WORDS[@]} - 1))\n"
      "_scalea\necho \"${CMAKE_MATCH_1}:\${COMPREPLY[*]}\"\n")
  endforeach()
  run("bash completion" ${BASH} -c "${complete}")
  foreach(want "1:report\n" "2:[^\n]*--format" "3:[^\n]*add")
    if(NOT last_out MATCHES "${want}")
      message(FATAL_ERROR "completion: no '${want}' in\n${last_out}")
    endif()
  endforeach()
endfunction()

# The docs are installed, the help names them where they are, --version says what was found.
function(check_docs_and_version)
  require_files(share/doc/scalea/README.md share/doc/scalea/user-guide.md
    share/doc/scalea/exports.md)
  run("scalea export --help" ${prefix}/bin/scalea export --help)
  if(NOT last_out MATCHES "${prefix}/share/doc/scalea/exports.md")
    message(FATAL_ERROR "scalea export --help does not name the installed exports.md:\n${last_out}")
  endif()
  run("scalea --version" ${prefix}/bin/scalea --version)
  set(version "${last_out}")
  foreach(want "^scalea [0-9]" "commit: " "libomp" "MPI" "PAPI" "SQLite" "PostgreSQL"
      "documentation: ${prefix}/share/doc/scalea\n")
    if(NOT version MATCHES "${want}")
      message(FATAL_ERROR "scalea --version lacks '${want}':\n${version}")
    endif()
  endforeach()
  # The commit is one of this checkout's history: HEAD, or an older one when the build is older
  # than the last commit (then it names the commit it was built from).
  execute_process(COMMAND git -C ${SCALEA_SOURCE} rev-parse --git-dir
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(want_commit "commit: unknown \\(not built from a git checkout\\)\n")
  else()
    set(want_commit "commit: ([^\n]*-g)?([0-9a-f]+)(-dirty)?\n")
  endif()
  if(NOT version MATCHES "${want_commit}")
    message(FATAL_ERROR "scalea --version: no '${want_commit}' in\n${version}")
  endif()
  if(rc EQUAL 0)
    run("the commit of scalea --version (${CMAKE_MATCH_2}) in the checkout's history"
      git -C ${SCALEA_SOURCE} merge-base --is-ancestor ${CMAKE_MATCH_2} HEAD)
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
require_files(include/scalea/scalea.h include/scalea/scalea.hpp)
check_find_package()
check_pkg_config()
check_pkg_config_fortran()
if(MAN_PAGES)
  check_man_pages()
else()
  message(STATUS "consumer: no man pages checked (built without help2man)")
endif()
check_completion()
check_docs_and_version()
message(STATUS "consumer: installed package found with find_package and pkg-config, built, ran "
  "under the installed scalea run (C; Fortran when built with it); man pages, completion, docs and --version checked")
file(REMOVE_RECURSE ${WORK_DIR})
