# At `cmake --install` (cmake/install_kit.cmake): the installed man pages name the documentation
# where this install puts it. They were made at build time naming the configured prefix's
# (SCALEA_MAN_BUILT_DOCDIR, cmake/man_pages.cmake); `--prefix P` installs it under P. DESTDIR is
# where a package is staged, not where its files will be: the pages name the prefix without it.
# Set before including: SCALEA_MAN_BUILT_DOCDIR, SCALEA_MAN_DOCDIR (CMAKE_INSTALL_DOCDIR, relative
# or absolute), SCALEA_MAN_DIR (CMAKE_INSTALL_MANDIR/man1).
if(IS_ABSOLUTE "${SCALEA_MAN_DOCDIR}")
  set(_docdir "${SCALEA_MAN_DOCDIR}")
else()
  set(_docdir "${CMAKE_INSTALL_PREFIX}/${SCALEA_MAN_DOCDIR}")
endif()
if(IS_ABSOLUTE "${SCALEA_MAN_DIR}")
  set(_pages "$ENV{DESTDIR}${SCALEA_MAN_DIR}")
else()
  set(_pages "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${SCALEA_MAN_DIR}")
endif()
if(NOT _docdir STREQUAL SCALEA_MAN_BUILT_DOCDIR)
  # help2man writes a '-' of the help as '\-' (not in every place: both are replaced).
  string(REPLACE "-" "\\-" _built "${SCALEA_MAN_BUILT_DOCDIR}/")
  string(REPLACE "-" "\\-" _now "${_docdir}/")
  file(GLOB _files "${_pages}/scalea*.1")
  foreach(_f ${_files})
    file(READ "${_f}" _text)
    string(REPLACE "${_built}" "${_now}" _text "${_text}")
    string(REPLACE "${SCALEA_MAN_BUILT_DOCDIR}/" "${_docdir}/" _text "${_text}")
    file(WRITE "${_f}" "${_text}")
  endforeach()
  message(STATUS "Man pages name the documentation in ${_docdir}")
endif()
