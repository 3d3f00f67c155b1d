# `cmake --install`: the CLI, both libraries, the public headers, a pkg-config file, a CMake package
# (find_package(AlibiBlind) -> AlibiBlind::alibi_blind, shared; AlibiBlind::alibi_blind_static), the man
# page, bash and zsh completions generated from the CLI's option tables, and the documentation.
# `cpack -G DEB` packages the same tree. Everything is relocatable (no absolute prefix baked in).
include(CMakePackageConfigHelpers)

set(ABL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/AlibiBlind)
set(ABL_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS alibi-blind RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS alibi_blind_shared EXPORT AlibiBlindTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS alibi_blind_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_ONLY)
install(TARGETS alibi_blind EXPORT AlibiBlindStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/alibi_blind.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/abl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

# CMake package. The shared target needs MPFR and GMP (its headers include mpfr.h and gmp.h); the static
# one also needs jansson and PLplot, so it is defined only where those are found.
install(EXPORT AlibiBlindTargets NAMESPACE AlibiBlind:: DESTINATION ${ABL_CMAKE_DIR})
install(EXPORT AlibiBlindStaticTargets NAMESPACE AlibiBlind:: DESTINATION ${ABL_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/AlibiBlindConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/AlibiBlindConfig.cmake INSTALL_DESTINATION ${ABL_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/AlibiBlindConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/AlibiBlindConfig.cmake ${CMAKE_BINARY_DIR}/AlibiBlindConfigVersion.cmake
        DESTINATION ${ABL_CMAKE_DIR})

# pkg-config: prefix relative to the .pc file, so --prefix at install time and DESTDIR both work.
file(RELATIVE_PATH ABL_PC_TO_PREFIX /prefix/${ABL_PKGCONFIG_DIR} /prefix)
string(REGEX REPLACE "/$" "" ABL_PC_TO_PREFIX "${ABL_PC_TO_PREFIX}")
# jansson and PLplot are private (no header includes them): plain -l flags for static linking, so that
# `pkg-config --libs alibi-blind` needs only mpfr.pc and gmp.pc.
set(ABL_PC_LIBS_PRIVATE "")
foreach(_abl_l ${JANSSON_LIBRARIES} ${PLPLOT_LIBRARIES} m)
  string(APPEND ABL_PC_LIBS_PRIVATE " -l${_abl_l}")
endforeach()
string(APPEND ABL_PC_LIBS_PRIVATE " -pthread")
string(STRIP "${ABL_PC_LIBS_PRIVATE}" ABL_PC_LIBS_PRIVATE)
configure_file(${CMAKE_SOURCE_DIR}/cmake/alibi-blind.pc.in ${CMAKE_BINARY_DIR}/alibi-blind.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/alibi-blind.pc DESTINATION ${ABL_PKGCONFIG_DIR})

# Man page and documentation.
install(FILES ${CMAKE_SOURCE_DIR}/docs/alibi-blind.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        PATTERN "alibi-blind.1" EXCLUDE)

# Shell completions, written by the binary itself from the option tables its parser uses
# (`alibi-blind completion bash|zsh`), so they cannot drift from the commands.
if(NOT CMAKE_CROSSCOMPILING)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/completions/alibi-blind ${CMAKE_BINARY_DIR}/completions/_alibi-blind
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/completions
                     COMMAND alibi-blind completion bash > ${CMAKE_BINARY_DIR}/completions/alibi-blind
                     COMMAND alibi-blind completion zsh > ${CMAKE_BINARY_DIR}/completions/_alibi-blind
                     DEPENDS alibi-blind VERBATIM
                     COMMENT "Generating bash and zsh completions from the option tables")
  add_custom_target(completions ALL DEPENDS ${CMAKE_BINARY_DIR}/completions/alibi-blind
                                            ${CMAKE_BINARY_DIR}/completions/_alibi-blind)
  install(FILES ${CMAKE_BINARY_DIR}/completions/alibi-blind
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
  install(FILES ${CMAKE_BINARY_DIR}/completions/_alibi-blind
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/site-functions)
endif()

# Debian package: `cpack -G DEB` in the build directory (.ci/run builds, installs and smoke-tests it).
set(CPACK_PACKAGE_NAME alibi-blind)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "exact ALiBi attention blindness distances in finite precision")
set(CPACK_PACKAGE_DESCRIPTION "alibi-blind computes exactly (MPFR/GMP) the token distance at which each head of an \
ALiBi attention layer goes blind in bf16, fp32, fp16 or fp8, the fraction of the attention matrix lost, and what \
mitigations change: command-line tool, C library (static and shared), headers, pkg-config and CMake files.")
set(CPACK_PACKAGE_CONTACT "alibi-blind maintainers <alibi-blind@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The headers include mpfr.h and gmp.h; pkg-config and find_package resolve them through these.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libmpfr-dev, libgmp-dev, pkg-config")
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/Testing/")
include(CPack)
