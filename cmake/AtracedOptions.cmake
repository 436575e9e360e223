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
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
