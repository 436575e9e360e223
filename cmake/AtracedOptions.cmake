# Warnings and sanitizers are INTERFACE targets linked PRIVATE by every target, so a
# consumer of an installed library never inherits our flags.
add_library(atraced_warnings INTERFACE)
target_compile_options(atraced_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Wformat=2
  -Wimplicit-fallthrough
  $<$<BOOL:${ATRACED_WERROR}>:-Werror>)

if(ATRACED_SANITIZE AND ATRACED_TSAN)
  message(FATAL_ERROR "ATRACED_SANITIZE and ATRACED_TSAN cannot be combined")
endif()
# Under clang, UBSan's C++ handlers (vptr, function) live in a runtime that only a C++ link
# pulls in: a C program loading our C++ libraries must ask for it (and for libstdc++, which
# that runtime needs). Consumers built by the tests use the same flags.
set(ATRACED_SANITIZER_C_LINK "")
if(ATRACED_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
    set(ATRACED_SANITIZER_C_LINK -fsanitize-link-c++-runtime -lstdc++)
    add_link_options("$<$<LINK_LANGUAGE:C>:${ATRACED_SANITIZER_C_LINK}>")
  endif()
endif()
if(ATRACED_TSAN)
  # Asio uses atomic_thread_fence, which TSan cannot model; g++ warns (-Wtsan) on every use.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  add_link_options(-fsanitize=thread)
endif()
if(ATRACED_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATRACED_FUZZ needs clang: configure with CC=clang CXX=clang++")
  endif()
  # Coverage instrumentation for every library the fuzzers link, and the sanitizers they
  # run under (the same as ATRACED_SANITIZE's: CI builds the tests and the fuzzers in one tree).
  add_compile_options(-fsanitize=fuzzer-no-link)
  if(NOT ATRACED_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
  endif()
endif()
