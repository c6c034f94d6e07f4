#include "machine_types.h"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>

#include <cstdio>

#include "probe_expansion.h"
#include "symbols/elf_file.h"
#include "symbols/kernel_symbols.h"
#include "tracepoint_format.h"

namespace rbt {

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
  pid_t pid = options.pid;
  env.expand_probe = [pid](const ProbeDesc &p) { return runtime::expand_probe(p, pid); };
  env.tracepoint_format = [this](const ProbeDesc &p) { return tracepoint_format(p); };
  env.kernel_struct = [this](const std::string &name) { return kernel_.find_struct(name); };
  env.kernel_symbol = [](const std::string &name) {
    return runtime::KernelSymbols::address_of(name);
  };
  env.user_symbol = [](const std::string &path, const std::string &name) -> std::optional<uint64_t> {
    auto elf = runtime::ElfFile::open(path);
    const runtime::ElfSymbol *sym = elf ? elf->find(name) : nullptr;
    return sym ? std::optional<uint64_t>(sym->value) : std::nullopt;
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

}  // namespace rbt
