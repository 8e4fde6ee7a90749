# scalea_subcommands(OUT SCALEA WORDS): the commands `SCALEA WORDS --help` lists under
# "Subcommands:", as NAME;DESCRIPTION pairs (WORDS: "" for scalea itself, "db" for scalea db).
# Used where the commands must be those of the binary, never a copy: the man pages
# (man_pages.cmake) and the install test (tests/consumer/run_consumer.cmake).
function(scalea_subcommands out scalea words)
  separate_arguments(args UNIX_COMMAND "${words} --help")
  execute_process(COMMAND ${scalea} ${args} OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${scalea} ${words} --help failed (${rc})")
  endif()
  set(found "")
  if(help MATCHES "\nSubcommands:\n(.*)")
    string(REGEX REPLACE "\n\n.*" "" block "${CMAKE_MATCH_1}")
    string(REPLACE "\n" ";" lines "${block}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^  ([a-z][a-z0-9-]*) +(.+)$")
        list(APPEND found "${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
