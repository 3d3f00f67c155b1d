# Debian packages: `cpack -G DEB` in a build configured with -DCMAKE_INSTALL_PREFIX=/usr (so that
# GNUInstallDirs picks the multiarch library directory, lib/<triplet>) and -DABL_DEB_MAINTAINER="Name <mail>"
# writes, as Debian splits a library with a tool (docs/packaging.md):
#   alibi-blind         the CLI, its man page (gzipped), bash and zsh completions, the documentation
#   libalibi-blind0     the shared library libalibi-blind.so.0 (SONAME), shlibs and the ldconfig trigger
#   libalibi-blind-dev  headers, static library, the .so link, alibi-blind.pc, the CMake package
# Each carries /usr/share/doc/<package>/copyright (DEP-5, cmake/copyright.in) and changelog.Debian.gz;
# Depends come from dpkg-shlibdeps. .ci/run checks them with lintian and installs them in a fresh root.
set(ABL_DEB_MAINTAINER "" CACHE STRING "Maintainer of the Debian packages, \"Name <address>\" (cpack -G DEB needs it)")
set(ABL_DEB_RELEASE 1 CACHE STRING "Debian revision of the packages (version ${PROJECT_VERSION}-<this>)")
set(ABL_DEB_VERSION ${PROJECT_VERSION}-${ABL_DEB_RELEASE})
set(ABL_DEB_PACKAGES alibi-blind libalibi-blind${PROJECT_VERSION_MAJOR} libalibi-blind-dev python3-alibi-blind)
set(ABL_DEB_COMPONENTS cli lib dev python)

if(ABL_DEB_MAINTAINER)
  if(NOT ABL_DEB_MAINTAINER MATCHES "^[^<>]+ <[^<>@ ]+@[^<>@ ]+\\.[^<>@ ]+>$" OR ABL_DEB_MAINTAINER MATCHES "@localhost")
    message(FATAL_ERROR "ABL_DEB_MAINTAINER='${ABL_DEB_MAINTAINER}': give \"Name <address@domain>\"")
  endif()
  # copyright and changelog.Debian.gz in each package's doc directory. The changelog's date is
  # SOURCE_DATE_EPOCH's when set (reproducible builds), else the configure time.
  string(TIMESTAMP ABL_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
  string(TIMESTAMP ABL_DEB_YEAR "%Y" UTC)
  file(READ ${CMAKE_SOURCE_DIR}/LICENSE _abl_license)
  string(REGEX REPLACE "^MIT License\n\n[^\n]*\n\n" "" _abl_license "${_abl_license}")
  string(REGEX REPLACE "\n\n" "\n.\n" _abl_license "${_abl_license}")
  string(REGEX REPLACE "\n" "\n " _abl_license "${_abl_license}")
  string(REGEX REPLACE "\n $" "" ABL_DEB_LICENSE_TEXT " ${_abl_license}")
  configure_file(${CMAKE_SOURCE_DIR}/cmake/copyright.in ${CMAKE_BINARY_DIR}/debian/copyright @ONLY)
  foreach(_abl_pkg _abl_comp IN ZIP_LISTS ABL_DEB_PACKAGES ABL_DEB_COMPONENTS)
    file(WRITE ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian
         "alibi-blind (${ABL_DEB_VERSION}) unstable; urgency=medium\n\n"
         "  * Built with CPack from alibi-blind ${PROJECT_VERSION} (cmake/abl_deb.cmake).\n\n"
         " -- ${ABL_DEB_MAINTAINER}  ${ABL_DEB_DATE}\n")
    add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian.gz
                       COMMAND gzip -9nc ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian > ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian.gz
                       DEPENDS ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian VERBATIM)
    add_custom_target(deb_changelog_${_abl_comp} ALL DEPENDS ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian.gz)
    install(FILES ${CMAKE_BINARY_DIR}/debian/copyright ${CMAKE_BINARY_DIR}/debian/${_abl_pkg}/changelog.Debian.gz
            DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_abl_pkg} COMPONENT ${_abl_comp})
    # Lintian overrides, each tag justified in docs/packaging.md.
    install(FILES ${CMAKE_SOURCE_DIR}/cmake/lintian/${_abl_comp} DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
            RENAME ${_abl_pkg} COMPONENT ${_abl_comp})
  endforeach()
  # dpkg runs ldconfig once after all packages of a transaction (Debian policy 8.1.1).
  file(WRITE ${CMAKE_BINARY_DIR}/debian/triggers "activate-noawait ldconfig\n")
  set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/triggers)
endif()

set(CPACK_PACKAGE_NAME alibi-blind)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${ABL_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${ABL_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli lib dev python)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${ABL_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SOURCE alibi-blind)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# CPack formats the long description (a space before each line, " ." for an empty one).
set(_abl_long "alibi-blind computes exactly (MPFR/GMP) the token distance at which each head\n\
of an ALiBi attention layer goes blind in bf16, fp32, fp16 or fp8, the fraction\n\
of the attention matrix lost, and what mitigations change.")
set(CPACK_DEBIAN_CLI_PACKAGE_NAME alibi-blind)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION science)
set(CPACK_COMPONENT_CLI_DESCRIPTION "exact ALiBi attention blindness distances in finite precision\n${_abl_long}\n\nThis package contains the command-line tool.")
set(CPACK_DEBIAN_LIB_PACKAGE_NAME libalibi-blind${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_MULTIARCH same)
set(CPACK_COMPONENT_LIB_DESCRIPTION "exact ALiBi attention blindness distances (shared library)\n${_abl_long}\n\nThis package contains the shared library.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libalibi-blind-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_MULTIARCH same)
# The headers include mpfr.h and gmp.h; the static library also needs jansson, SLEEF (and PLplot when drawn).
set(_abl_dev_depends "libalibi-blind${PROJECT_VERSION_MAJOR} (= ${ABL_DEB_VERSION}), libmpfr-dev, libgmp-dev, libjansson-dev, libsleef-dev")
if(ABL_HAVE_PLPLOT)
  string(APPEND _abl_dev_depends ", libplplot-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_abl_dev_depends}")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "pkgconf | pkg-config, cmake")
set(CPACK_COMPONENT_DEV_DESCRIPTION "exact ALiBi attention blindness distances (development files)\n${_abl_long}\n\nThis package contains the headers, the static library, a pkg-config file\nand a CMake package.")
# The Python package (cmake/abl_python.cmake): pure Python, loads libalibi-blind0 with ctypes.
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-alibi-blind)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "libalibi-blind${PROJECT_VERSION_MAJOR} (>= ${ABL_DEB_VERSION}), python3:any")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-numpy, python3-torch")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION "exact ALiBi attention blindness distances (Python 3 package)\n${_abl_long}\n\nThis package contains the Python 3 package alibi_blind (ctypes over the shared\nlibrary; numpy and torch optional).")
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/Testing/")
# cpack refuses without a maintainer rather than inventing one.
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/abl_cpack_check.cmake)
file(WRITE ${CMAKE_BINARY_DIR}/abl_cpack_check.cmake
     "if(CPACK_GENERATOR STREQUAL \"DEB\" AND NOT CPACK_DEBIAN_PACKAGE_MAINTAINER)\n"
     "  message(FATAL_ERROR \"configure with -DABL_DEB_MAINTAINER=\\\"Name <address>\\\" to build the Debian packages\")\n"
     "endif()\n")
include(CPack)
