# Run by `cmake --install` (packaging/CMakeLists.txt, install(CODE)): writes the systemd unit
# for the prefix being installed to (here CMAKE_INSTALL_PREFIX is --prefix when one is given)
# and installs it. DESTDIR changes where the unit goes, never the paths written in it.
# In: WARDEN_UNIT_TEMPLATE, WARDEN_UNIT_WORK_DIR, WARDEN_UNIT_DIR, WARDEN_INSTALL_BINDIR,
# WARDEN_INSTALL_DATADIR (GNUInstallDirs' values: relative to the prefix, or absolute).
foreach(kind UNIT BINDIR DATADIR)
  if(kind STREQUAL "UNIT")
    set(dir "${WARDEN_UNIT_DIR}")
  else()
    set(dir "${WARDEN_INSTALL_${kind}}")
  endif()
  if(IS_ABSOLUTE "${dir}")
    set(WARDEN_${kind} "${dir}")
  else()
    set(WARDEN_${kind} "${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
endforeach()
# One work directory per prefix: installs to several prefixes may run at once.
string(MD5 prefix_key "${CMAKE_INSTALL_PREFIX}")
set(unit "${WARDEN_UNIT_WORK_DIR}/${prefix_key}/warden.service")
configure_file("${WARDEN_UNIT_TEMPLATE}" "${unit}" @ONLY)
file(INSTALL DESTINATION "${WARDEN_UNIT}" TYPE FILE FILES "${unit}")
