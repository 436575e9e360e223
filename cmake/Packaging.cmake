# CPack: a Debian package `atraced` (cpack -G DEB in the build directory).
#
# The package is laid out for prefix /usr whatever CMAKE_INSTALL_PREFIX the tree was
# configured with: CPack installs with DESTDIR (CPACK_SET_DESTDIR) and prefix /usr, and
# systemd/install_systemd.cmake works out the units' paths from that prefix at install time
# (/usr/sbin/atraced, /etc/atraced/atraced.conf, /lib/systemd/system, ...).

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "atraced")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "atraced")
set(CPACK_PACKAGE_CONTACT "atraced maintainers <atraced@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "trace spool daemon for Ascend hosts")
set(CPACK_PACKAGE_DESCRIPTION
    "atraced owns the CANN trace root: one daemon creates the event directories in CANN's\nlayout and ages them against one counter per class for the whole root. This package\nships the daemon, systemd socket and service units (system and user), the system\nconfiguration (/etc/atraced/atraced.conf, trace root /var/log/ascend) and the atrace group.")
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX "/usr")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
# CPack's usual route (CPACK_INSTALL_CMAKE_PROJECTS) first builds the `preinstall` target,
# i.e. `all` with every test binary. The package only needs what the install rules name,
# so CPack runs the tree's install rules directly (with DESTDIR and prefix /usr, as above).
# Build first: `cmake --build build && (cd build && cpack -G DEB)`; `make package` still
# builds everything on its own.
configure_file(${PROJECT_SOURCE_DIR}/systemd/cpack_install.cmake.in ${PROJECT_BINARY_DIR}/cpack_install.cmake @ONLY)
set(CPACK_INSTALL_CMAKE_PROJECTS "")
set(CPACK_INSTALL_SCRIPTS ${PROJECT_BINARY_DIR}/cpack_install.cmake)
set(CPACK_OUTPUT_FILE_PREFIX "")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_NAME "atraced")
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
# systemd-sysusers/systemd-tmpfiles (systemd) or addgroup (adduser) for postinst.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
find_program(ATRACED_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(ATRACED_DPKG_SHLIBDEPS)
if(ATRACED_DPKG_SHLIBDEPS)
  # Library dependencies from the binaries themselves (a sanitizer build also gets libasan).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "systemd | adduser")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6 (>= 2.36), libstdc++6 (>= 12), libgcc-s1, libsystemd0, libboost-program-options1.74.0, systemd | adduser")
endif()
# CPack does not mark /etc files as conffiles by itself: an edited atraced.conf must
# survive upgrades and `dpkg -r` (only --purge removes it).
file(WRITE ${PROJECT_BINARY_DIR}/debian/conffiles "/etc/atraced/atraced.conf\n")
# Our own postinst/postrm replace the ones CPack would write with an ldconfig call, so
# the client library (libatrace_client.so, if built) gets ldconfig through a trigger.
file(WRITE ${PROJECT_BINARY_DIR}/debian/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/systemd/debian/postinst;${PROJECT_SOURCE_DIR}/systemd/debian/prerm;${PROJECT_SOURCE_DIR}/systemd/debian/postrm;${PROJECT_BINARY_DIR}/debian/conffiles;${PROJECT_BINARY_DIR}/debian/triggers")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Only the package: no source package from `make package_source` over the work tree.
set(CPACK_SOURCE_GENERATOR "")

include(CPack)
