# Compiles the paper's published values (tables/published/*.csv, transcribed as printed) into the
# library, so that `alibi-blind reproduce` needs no data directory. Runs at configure time; a change
# to one of the files re-runs CMake. Sets ABL_PUBLISHED_SOURCE to the generated C file.
set(ABL_PUBLISHED_FILES table1.csv table4.csv table5.csv table8.csv claims.csv)
set(ABL_PUBLISHED_SOURCE ${CMAKE_BINARY_DIR}/generated/abl_published_data.c)

set(_abl_src "/* Generated from tables/published/ by cmake/abl_embed_published.cmake: do not edit. */\n")
string(APPEND _abl_src "#include \"paper/abl_published_data.h\"\n")
set(_abl_entries "")
set(_abl_i 0)
foreach(_abl_f ${ABL_PUBLISHED_FILES})
  set(_abl_path ${CMAKE_SOURCE_DIR}/tables/published/${_abl_f})
  if(NOT EXISTS ${_abl_path})
    message(FATAL_ERROR "missing ${_abl_path}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_abl_path})
  file(READ ${_abl_path} _abl_hex HEX)
  string(LENGTH "${_abl_hex}" _abl_len)
  math(EXPR _abl_len "${_abl_len} / 2")
  # Bytes, not a string literal: ISO C limits literals to 4095 characters (-Wpedantic).
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _abl_hex "${_abl_hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    " _abl_hex
                     "${_abl_hex}")
  string(APPEND _abl_src "\nstatic const unsigned char file_${_abl_i}[] = {\n    ${_abl_hex}0x00};\n")
  string(APPEND _abl_entries "    {\"${_abl_f}\", file_${_abl_i}, ${_abl_len}},\n")
  math(EXPR _abl_i "${_abl_i} + 1")
endforeach()
string(APPEND _abl_src "\nconst abl_embedded_file abl_embedded_published[] = {\n${_abl_entries}};\n")
string(APPEND _abl_src "const size_t abl_embedded_published_count = ${_abl_i};\n")
# Rewrite only on change, so an unrelated reconfigure does not rebuild the library.
file(WRITE ${ABL_PUBLISHED_SOURCE}.tmp "${_abl_src}")
configure_file(${ABL_PUBLISHED_SOURCE}.tmp ${ABL_PUBLISHED_SOURCE} COPYONLY)
