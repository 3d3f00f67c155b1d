# `cmake --install`: the CLI, both libraries, the public headers, a pkg-config file, a CMake package
# (find_package(AlibiBlind) -> AlibiBlind::alibi_blind, shared; AlibiBlind::alibi_blind_static), the man
# page, bash and zsh completions generated from the CLI's option tables, and the documentation.
# `cpack -G DEB` packages the same tree as three Debian packages (cmake/abl_deb.cmake, docs/packaging.md).
# Everything is relocatable (no absolute prefix baked in).
include(CMakePackageConfigHelpers)

set(ABL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/AlibiBlind)
set(ABL_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Components, one per Debian package: cli (alibi-blind), lib (libalibi-blind0), dev (libalibi-blind-dev).
install(TARGETS alibi-blind RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(TARGETS alibi_blind_shared EXPORT AlibiBlindTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_SKIP
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS alibi_blind_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev NAMELINK_ONLY)
install(TARGETS alibi_blind EXPORT AlibiBlindStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/alibi_blind.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/abl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.h")

# CMake package. The shared target needs MPFR and GMP (its headers include mpfr.h and gmp.h); the static
# one also needs jansson and PLplot, so it is defined only where those are found.
install(EXPORT AlibiBlindTargets NAMESPACE AlibiBlind:: DESTINATION ${ABL_CMAKE_DIR} COMPONENT dev)
install(EXPORT AlibiBlindStaticTargets NAMESPACE AlibiBlind:: DESTINATION ${ABL_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/AlibiBlindConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/AlibiBlindConfig.cmake INSTALL_DESTINATION ${ABL_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/AlibiBlindConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/AlibiBlindConfig.cmake ${CMAKE_BINARY_DIR}/AlibiBlindConfigVersion.cmake
        DESTINATION ${ABL_CMAKE_DIR} COMPONENT dev)

# pkg-config: prefix relative to the .pc file, so --prefix at install time and DESTDIR both work.
file(RELATIVE_PATH ABL_PC_TO_PREFIX /prefix/${ABL_PKGCONFIG_DIR} /prefix)
string(REGEX REPLACE "/$" "" ABL_PC_TO_PREFIX "${ABL_PC_TO_PREFIX}")
# jansson, SLEEF and PLplot are private (no header includes them): plain -l flags for static linking, so that
# `pkg-config --libs alibi-blind` needs only mpfr.pc and gmp.pc.
set(ABL_PC_LIBS_PRIVATE "")
foreach(_abl_l ${JANSSON_LIBRARIES} ${SLEEF_LIBRARIES} ${PLPLOT_LIBRARIES} m)
  string(APPEND ABL_PC_LIBS_PRIVATE " -l${_abl_l}")
endforeach()
string(APPEND ABL_PC_LIBS_PRIVATE " -pthread")
string(STRIP "${ABL_PC_LIBS_PRIVATE}" ABL_PC_LIBS_PRIVATE)
configure_file(${CMAKE_SOURCE_DIR}/cmake/alibi-blind.pc.in ${CMAKE_BINARY_DIR}/alibi-blind.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/alibi-blind.pc DESTINATION ${ABL_PKGCONFIG_DIR} COMPONENT dev)

# Man page: written by the binary from its template (docs/alibi-blind.1.in: the prose) and the option
# table (`alibi-blind man`: each command's options, their heads and order), then gzipped as Debian ships
# them (-n: no name or time stamp, the same bytes every build); and the documentation.
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/alibi-blind.1 ${CMAKE_BINARY_DIR}/alibi-blind.1.gz
                   COMMAND alibi-blind man ${CMAKE_SOURCE_DIR}/docs/alibi-blind.1.in > ${CMAKE_BINARY_DIR}/alibi-blind.1
                   COMMAND gzip -9nc ${CMAKE_BINARY_DIR}/alibi-blind.1 > ${CMAKE_BINARY_DIR}/alibi-blind.1.gz
                   DEPENDS alibi-blind ${CMAKE_SOURCE_DIR}/docs/alibi-blind.1.in VERBATIM
                   COMMENT "Generating the man page from docs/alibi-blind.1.in and the option table")
add_custom_target(manpage ALL DEPENDS ${CMAKE_BINARY_DIR}/alibi-blind.1.gz)
install(FILES ${CMAKE_BINARY_DIR}/alibi-blind.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli
        PATTERN "alibi-blind.1.in" EXCLUDE)

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
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions COMPONENT cli)
  # zsh: vendor-completions is Debian's place for what packages ship under /usr; site-functions is in
  # zsh's path for any other prefix (/usr/local/share/zsh/site-functions).
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(ABL_ZSH_COMPLETION_DIR ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions)
  else()
    set(ABL_ZSH_COMPLETION_DIR ${CMAKE_INSTALL_DATAROOTDIR}/zsh/site-functions)
  endif()
  install(FILES ${CMAKE_BINARY_DIR}/completions/_alibi-blind DESTINATION ${ABL_ZSH_COMPLETION_DIR} COMPONENT cli)
endif()

include(${CMAKE_SOURCE_DIR}/cmake/abl_python.cmake)
include(${CMAKE_SOURCE_DIR}/cmake/abl_deb.cmake)
