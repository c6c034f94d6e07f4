#include "machine_types.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>

#include <cstdio>

#include "instruction_boundary.h"
#include "probe_expansion.h"
#include "symbols/uprobe_site.h"
#include "symbols/elf_file.h"
#include "symbols/kernel_symbols.h"
#include "symbols/library_resolver.h"
#include "tracepoint_format.h"
#include "warnings.h"

namespace rbt {

namespace {

// A uprobe inside an instruction replaces part of it with a breakpoint: the traced process then
// faults or computes wrong results. The runtime finds the function's code (it must not link
// LLVM); the disassembler decides; --unsafe turns the refusal into a warning.
Status check_instruction_boundary(const ProbeDesc &probe, pid_t pid, bool unsafe,
                                  std::string &warnings) {
  auto site = runtime::uprobe_site(probe, pid);
  if (!site)
    return Ok{};
  std::string where;
  disasm::Boundary b = disasm::Boundary::Unknown;
  if (site->function.empty()) {
    where = "no function symbol covers it, so rbt cannot tell whether it starts an instruction";
  } else {
    b = disasm::instruction_boundary(site->machine, site->code.data(), site->code.size(),
                                     site->offset);
    if (b == disasm::Boundary::Yes)
      return Ok{};
    where = b == disasm::Boundary::No
                ? "it is inside an instruction of " + site->function + " (offset " +
                      std::to_string(site->offset) + ")"
                : "rbt cannot decode " + site->function + "'s instructions up to offset " +
                      std::to_string(site->offset);
  }
  if (unsafe) {
    std::string warning = "rbt: warning: " + probe.name + ": " + where +
                          "; --unsafe attaches it anyway, which may crash the traced process or "
                          "corrupt its results\n";
    if (!warnings_suppressed)
      fputs(warning.c_str(), stderr);
    warnings += warning;
    return Ok{};
  }
  return make_error("", "cannot probe " + probe.name + ": " + where,
                    b == disasm::Boundary::No
                        ? "probe the first byte of an instruction (see objdump -d); --unsafe "
                          "attaches anyway, at the risk of crashing the process"
                        : "--unsafe attaches anyway, at the risk of crashing the process");
}

// A function whose symbol has no size (`_init`, assembly without `.size`) has no known end, so
// nothing shows that the probe is inside it: bpftrace refuses it, with these words, unless
// --unsafe. Only a function named in the script is checked (each is one ELF read); a wildcard
// is expanded from the sized functions' table.
Status check_function_size(const ProbeDesc &spec, const ProbeDesc &probe, pid_t pid,
                           bool unsafe) {
  bool named = spec.func.find_first_of("*?[") == std::string::npos;
  if (unsafe || !named || probe.func.empty() ||
      (probe.kind != ProbeKind::Uprobe && probe.kind != ProbeKind::Uretprobe))
    return Ok{};
  auto elf = runtime::ElfFile::open(runtime::probe_file(probe, pid));
  if (!elf)
    return Ok{};  // attaching says why
  const runtime::ElfSymbol *sym = elf->find(probe.func);
  if (!sym || sym->size != 0)
    return Ok{};
  return make_error("", "Could not determine boundary for " + probe.func +
                            " (symbol has size 0)",
                    "--unsafe attaches anyway; it could lead to data corruption in the target "
                    "process");
}

}  // namespace

const RecordLayout *MachineTypes::tracepoint_format(const ProbeDesc &probe) {
  auto [it, inserted] = tracepoints_.try_emplace(probe.name);
  if (inserted) {
    auto format = runtime::read_tracepoint_format(probe.target, probe.func);
    if (format)
      it->second = std::make_unique<RecordLayout>(std::move(*format));
  }
  return it->second.get();
}

sema::Environment MachineTypes::environment(const Options &options) {
  sema::Environment env;
  env.unsafe = options.unsafe;
  env.has_command = !options.command.empty();
  env.positional = options.args;
  env.named = options.named_args;
  pid_t pid = options.pid;
  bool unsafe = options.unsafe;
  env.expand_probe = [this, pid, unsafe](const ProbeDesc &p) -> Result<std::vector<ProbeDesc>> {
    auto expanded = runtime::expand_probe(p, pid);
    if (!expanded)
      return expanded;
    bool binary = p.kind == ProbeKind::Uprobe || p.kind == ProbeKind::Uretprobe ||
                  p.kind == ProbeKind::Usdt;
    if (binary && pid > 0)
      resolutions_[p.target] = runtime::resolution_in_process(p.target, pid);
    for (const ProbeDesc &e : *expanded) {
      if (binary)
        files_read_.insert({e.target, e.in_process_root});
      if (auto s = check_instruction_boundary(e, pid, unsafe, warnings_); !s)
        return s.error();
      if (auto s = check_function_size(p, e, pid, unsafe); !s)
        return s.error();
    }
    return expanded;
  };
  env.tracepoint_format = [this](const ProbeDesc &p) { return tracepoint_format(p); };
  env.kernel_struct = [this](const std::string &name) { return kernel_.find_struct(name); };
  env.raw_tracepoint_args = [this](const ProbeDesc &p) { return kernel_.raw_tracepoint_args(p.func); };
  env.kernel_enum = [this](const std::string &name) { return kernel_.find_enum_value(name); };
  env.kernel_percpu_var = [this](const std::string &name) { return kernel_.find_var(name); };
  env.kernel_enum_type = [this](const std::string &name) { return kernel_.find_enum(name); };
  env.kernel_symbol = [](const std::string &name) {
    return runtime::KernelSymbols::address_of(name);
  };
  env.user_symbol = [this, pid](const ProbeDesc &probe,
                                const std::string &name)
      -> std::optional<sema::Environment::UserSymbol> {
    files_read_.insert({probe.target, probe.in_process_root});
    auto elf = runtime::ElfFile::open(runtime::probe_file(probe, pid));
    const runtime::ElfSymbol *sym = elf ? elf->find(name) : nullptr;
    if (!sym)
      return std::nullopt;
    return sema::Environment::UserSymbol{sym->value, sym->size, elf->position_independent()};
  };
  return env;
}


std::string MachineTypes::bpf_cpu() {
  utsname u{};
  int major = 0, minor = 0;
  if (uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
      (major > 6 || (major == 6 && minor >= 6)))
    return "v4";
  return "v3";
}

unsigned MachineTypes::usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

bool MachineTypes::in_child_pid_namespace() {
  // The initial pid namespace has a fixed inode number, the kernel's PROC_PID_INIT_INO. (Not a
  // comparison with /proc/1/ns/pid: with `unshare --mount-proc` process 1 is the namespace's.)
  constexpr ino_t kInitPidNamespaceIno = 0xEFFFFFFCU;
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != kInitPidNamespaceIno;
}

}  // namespace rbt
