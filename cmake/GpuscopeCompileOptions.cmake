# Warnings and sanitizers shared by every gpuscope target.
# gpuscope_target_defaults(target [NO_SANITIZE]) — NO_SANITIZE for the injected collector, which runs inside
# programs we do not build and must not pull a sanitizer runtime into them.
function(gpuscope_target_defaults target)
  cmake_parse_arguments(ARG "NO_SANITIZE" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)
  if(GPUSCOPE_SANITIZE AND NOT ARG_NO_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
