# Writes OUT, a C header with the syscall number → name table of the build host's
# <asm/unistd_64.h> (IN), for syscall_name() (strings.bpf.c). Run as
#   cmake -DIN=.../asm/unistd_64.h -DOUT=.../syscall_names.h -P syscall_names.cmake
# Each name takes RBT_SYSCALL_NAME_SIZE bytes, the size sema gives syscall_name()'s string.
set(name_size 32)
file(STRINGS "${IN}" defines REGEX "^#define __NR_[a-z0-9_]+ [0-9]+$")
if(NOT defines)
  message(FATAL_ERROR "no __NR_ definitions in ${IN}")
endif()
set(entries "")
set(count 0)
foreach(line ${defines})
  string(REGEX REPLACE "^#define __NR_([a-z0-9_]+) ([0-9]+)$" "\\1;\\2" pair "${line}")
  list(GET pair 0 name)
  list(GET pair 1 nr)
  string(LENGTH "${name}" length)
  if(NOT length LESS name_size)
    message(FATAL_ERROR "syscall name ${name} does not fit ${name_size} bytes")
  endif()
  string(APPEND entries "    [${nr}] = \"${name}\",\n")
  if(NOT nr LESS count)
    math(EXPR count "${nr} + 1")
  endif()
endforeach()
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by stdlib/bpf/syscall_names.cmake: do not edit.\n"
  "#define RBT_SYSCALL_NAME_SIZE ${name_size}\n"
  "#define RBT_SYSCALL_COUNT ${count}\n"
  "static const char rbt_syscall_names[RBT_SYSCALL_COUNT][RBT_SYSCALL_NAME_SIZE] = {\n"
  "${entries}};\n")
# Unchanged contents keep the header's time, so the bitcode is not rebuilt for nothing.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
