# Warnings and sanitizers shared by every gpuscope target.
# gpuscope_target_defaults(target [NO_SANITIZE]) — NO_SANITIZE for the injected collector, which runs inside
# programs we do not build and must not pull a sanitizer runtime into them.
function(gpuscope_target_defaults target)
  cmake_parse_arguments(ARG "NO_SANITIZE" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)
  if(GPUSCOPE_SANITIZE AND NOT ARG_NO_SANITIZE)
    if(GPUSCOPE_SANITIZE STREQUAL "thread")
      set(flags -fsanitize=thread)
    else()  # "address" (or ON): AddressSanitizer and UndefinedBehaviorSanitizer, every report fatal
      set(flags -fsanitize=address,undefined -fno-sanitize-recover=undefined)
    endif()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:${flags} -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE ${flags})
  endif()
endfunction()
