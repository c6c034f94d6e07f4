#pragma once
// A minimal kernel BTF for an object's CO-RE relocations (stdlib/bpf: task_struct's fields,
// pt_regs'). libbpf relocates against /sys/kernel/btf/vmlinux by default, and parsing it and
// searching its 127k types for each local type took about 150 ms of every load of a script
// using rstack or nstack: three quarters of a warm start. This builds, once per kernel and
// object, a BTF with only the structs the object names and only the members it declares, at
// the kernel's offsets; libbpf reads it instead (btf_custom_path). The result is cached by
// the caller (run_object.cpp, next to the compiled objects).

#include <bpf/libbpf.h>

#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

// The raw BTF bytes for `obj`'s local CO-RE types against the running kernel; empty when the
// object declares no type the kernel has.
Result<std::string> minimal_core_btf(bpf_object *obj);

// Whether the object file `elf` has CO-RE relocations (records in .BTF.ext's core_relo part):
// without them libbpf reads no kernel BTF, and there is nothing to make.
bool has_core_relocations(const std::vector<char> &elf);

// What decides minimal_core_btf's answer on a given kernel: the names of the object's named
// structs and unions and of their members, as text. Every script that uses rstack has the
// walker's (codegen/link_walker.h) and nothing else named, so they share one minimal BTF.
std::string core_btf_key(bpf_object *obj);

}  // namespace rbt::runtime
