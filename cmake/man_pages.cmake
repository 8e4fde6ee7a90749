cmake_minimum_required(VERSION 3.25)
# Man pages of scalea and of each of its commands, made by help2man from their --help, so that a
# page says what --help says: scalea.1, scalea-CMD.1 for every command `scalea --help` lists and
# scalea-CMD-SUB.1 for every command those list (scalea db add, ...). Run at build time
# (cmake/install_kit.cmake):
#   cmake -DSCALEA=bin/scalea -DHELP2MAN=... -DOUT_DIR=... -DVERSION=... -DDOCDIR=...
#         -P man_pages.cmake
# A build tree's --help names the sources' docs/; a page names the installed ones (DOCDIR), where
# an installed user has them: the help is made with SCALEA_DOCS_DIR=DOCDIR (output/docs.hpp).
# `cmake --install --prefix P` names P's at install time (man_pages_install.cmake).
foreach(v SCALEA HELP2MAN OUT_DIR VERSION DOCDIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "man_pages.cmake: ${v} is not set")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/scalea_commands.cmake)

# Every help read here, the commands' one-line descriptions too (the pages' NAME lines).
set(ENV{SCALEA_DOCS_DIR} ${DOCDIR})

# scalea-WORDS.1 from `scalea WORDS --help` (scalea.1 when WORDS is empty).
function(page words description)
  string(REPLACE " " "-" suffix "${words}")
  set(name scalea)
  if(NOT suffix STREQUAL "")
    set(name scalea-${suffix})
  endif()
  set(file ${OUT_DIR}/${name}.1)
  execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr
      "--help-option=${words} --help" "--version-string=${name} ${VERSION}"
      "--name=${description}" --section=1 --source=scalea --output=${file} ${SCALEA}
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man for scalea ${words} failed (${rc}): ${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR})
page("" "per-region overhead analysis of OpenMP, MPI and hybrid programs")
scalea_subcommands(commands ${SCALEA} "")
while(commands)
  list(POP_FRONT commands cmd description)
  page("${cmd}" "${description}")
  scalea_subcommands(subs ${SCALEA} "${cmd}")
  while(subs)
    list(POP_FRONT subs sub sub_description)
    page("${cmd} ${sub}" "${sub_description}")
  endwhile()
endwhile()
