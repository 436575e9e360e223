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
if(ATRACED_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(ATRACED_TSAN)
  # Asio uses atomic_thread_fence, which TSan cannot model; g++ warns (-Wtsan) on every use.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
  add_link_options(-fsanitize=thread)
endif()
if(ATRACED_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATRACED_FUZZ needs clang: configure with CC=clang CXX=clang++")
  endif()
  # Coverage instrumentation and sanitizers for every library the fuzzers link.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
