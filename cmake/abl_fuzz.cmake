# libFuzzer harnesses (tests/fuzz/, docs/fuzzing.md). Configure with clang and -DABL_FUZZ=ON:
#   CC=clang cmake -S . -B build-fuzz -DABL_FUZZ=ON && cmake --build build-fuzz
# Everything is then compiled with coverage instrumentation for libFuzzer plus ASan and UBSan, and
# abl_add_fuzzer(name source [more sources]) adds one harness executable linked with the library.
option(ABL_FUZZ "Build the libFuzzer harnesses of tests/fuzz (clang only)" OFF)

if(ABL_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ABL_FUZZ=ON needs clang (libFuzzer): configure with CC=clang")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

function(abl_add_fuzzer name source)
  if(NOT ABL_FUZZ)
    return()
  endif()
  add_executable(${name} ${source} ${ARGN})
  target_link_libraries(${name} PRIVATE alibi_blind)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
endfunction()
