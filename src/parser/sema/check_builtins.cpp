// Type checks for the builtins of builtins.def, one function each.

#include "format_spec.h"
#include "perf_regs.h"
#include "probe_spec.h"
#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

namespace {
Type u32() { return Type::integer(32, false); }
Type u64() { return Type::integer(64, false); }
}  // namespace

Type TypeChecker::check_pid(const Builtin &) { return u32(); }
Type TypeChecker::check_tid(const Builtin &) { return u32(); }
Type TypeChecker::check_uid(const Builtin &) { return u32(); }
Type TypeChecker::check_gid(const Builtin &) { return u32(); }
Type TypeChecker::check_cpu(const Builtin &) { return u32(); }
Type TypeChecker::check_rand(const Builtin &) { return u32(); }
Type TypeChecker::check_nsecs(const Builtin &) { return u64(); }
Type TypeChecker::check_cgroup(const Builtin &) { return u64(); }
// A task_struct pointer when the kernel's BTF describes it, else a plain address.
// Kernel memory whose layout depends on the probe: cast it to a struct pointer to read it.
// In an iter: probe it is the iterator's `struct bpf_iter__<name>` (ctx.task, ctx.file, ...),
// as bpftrace types it.
Type TypeChecker::check_ctx(const Builtin &) {
  const auto &probes = info_.probes[probe_];
  if (!probes.empty() && probes.front().kind == ProbeKind::Iter)
    if (const RecordLayout *it = find_struct("bpf_iter__" + probes.front().target))
      return Type::pointer(Type::record_of(it->name, it->size, true, false), false);
  return Type::pointer(Type::none(), false);
}

Type TypeChecker::check_curtask(const Builtin &) {
  const RecordLayout *task = env_.kernel_struct ? env_.kernel_struct("task_struct") : nullptr;
  if (!task)
    return u64();
  return Type::pointer(Type::record_of("task_struct", task->size, true, false), false);
}

Type TypeChecker::check_args(const Builtin &node) {
  const RecordLayout *first = nullptr;
  for (auto &p : info_.probes[probe_]) {
    if (p.kind != ProbeKind::Tracepoint && p.kind != ProbeKind::RawTracepoint) {
      diags_.error(node.range, std::string("args is only available in tracepoint and "
                                           "rawtracepoint probes, not in ") +
                                   probe_kind_name(p.kind));
      return Type::none();
    }
    // A rawtracepoint's arguments are the kernel function's parameters (BTF), as in bpftrace.
    const RecordLayout *layout =
        p.kind == ProbeKind::RawTracepoint
            ? (env_.raw_tracepoint_args ? env_.raw_tracepoint_args(p) : nullptr)
            : (env_.tracepoint_format ? env_.tracepoint_format(p) : nullptr);
    if (!layout) {
      diags_.error(node.range, "the format of " + p.name + " is unknown");
      return Type::none();
    }
    // Each attach point gets a program of its own: records that differ are fine as long as
    // the fields the probe uses agree (check_field_access), as in bpftrace.
    info_.args_layouts[p.name] = layout;
    if (!first)
      first = layout;
  }
  if (!first)
    return Type::none();
  info_.records[first->name] = first;
  return Type::record_of(first->name, first->size, false, probe_reads_user_space());
}
Type TypeChecker::check_comm(const Builtin &) { return Type::string(16); }
// Records the fields `node` reads from the current task (`steps`: a pointer field of
// task_struct, then the field read through it) at their BTF offsets, as curtask->a->b would.
bool TypeChecker::bind_task_path(const Builtin &node, const char *pointer, const char *field,
                                 uint32_t field_size) {
  const RecordLayout *task = find_struct("task_struct");
  const FieldLayout *first = task ? task->find(pointer) : nullptr;
  const FieldLayout *last = task ? task->find(field) : nullptr;
  if (!first || first->size != 8 || !last || last->size != field_size) {
    diags_.error(node.range, node.name + " needs task_struct's " + pointer + " and " + field +
                                 " in the kernel's BTF");
    return false;
  }
  info_.task_paths[&node] = {first, last};
  return true;
}

// pcomm: task->real_parent->comm, the parent process's name (bpftrace's definition).
Type TypeChecker::check_pcomm(const Builtin &node) {
  return bind_task_path(node, "real_parent", "comm", 16) ? Type::string(16) : Type::none();
}
// leader_comm: task->group_leader->comm, the process's name where comm is the thread's.
Type TypeChecker::check_leader_comm(const Builtin &node) {
  return bind_task_path(node, "group_leader", "comm", 16) ? Type::string(16) : Type::none();
}
Type TypeChecker::check_username(const Builtin &) { return Type::user_name(); }

Type TypeChecker::check_probe(const Builtin &) {
  size_t longest = 0;
  for (auto &p : info_.probes[probe_])
    longest = std::max(longest, p.name.size());
  return Type::string(static_cast<uint32_t>(longest + 1));
}

Type TypeChecker::check_probetype(const Builtin &) {
  size_t longest = 0;
  for (auto &p : info_.probes[probe_])
    longest = std::max(longest, std::string(probe_type_name(p.kind)).size());
  return Type::string(static_cast<uint32_t>(longest + 1));
}

Type TypeChecker::check_retval(const Builtin &node) {
  for (auto &p : info_.probes[probe_]) {
    if (!is_return_probe(p.kind)) {
      diags_.error(node.range, "retval is only available in uretprobe and kretprobe probes, not in " +
                                   std::string(probe_kind_name(p.kind)));
      return Type::none();
    }
  }
  return u64();
}

Type TypeChecker::check_arg(const Builtin &node) {
  unsigned index = builtin_arg_index(node.name);
  for (auto &p : info_.probes[probe_]) {
    if (!has_arguments(p.kind)) {
      diags_.error(node.range, node.name + " is not available in " +
                                   std::string(probe_kind_name(p.kind)) +
                                   " probes (only in kprobe, uprobe, usdt and rawtracepoint)");
      return Type::none();
    }
    if ((p.kind == ProbeKind::Kprobe || p.kind == ProbeKind::Uprobe) && index > 5) {
      diags_.error(node.range, node.name + " is not available: " + probe_kind_name(p.kind) +
                                   " arguments are arg0 to arg5 (the registers of the calling "
                                   "convention)");
      return Type::none();
    }
    // libbpf's USDT decoder keeps at most 12 argument specs (BPF_USDT_MAX_ARG_CNT).
    if (p.kind == ProbeKind::Usdt && index > 11) {
      diags_.error(node.range, node.name + " is not available: USDT arguments are arg0 to arg11");
      return Type::none();
    }
  }
  return u64();
}

Type TypeChecker::check_printf(const Call &call) {
  for (size_t i = 1; i < call.args.size(); i++)
    check_expr(*call.args[i]);
  auto *fmt = expect_literal(*call.args[0], "printf's first argument");
  if (!fmt)
    return Type::none();
  ParsedFormat parsed = parse_format(fmt->value);
  if (!parsed.error.empty()) {
    diags_.error(fmt->range, "invalid printf format: " + parsed.error);
    return Type::none();
  }
  size_t want = parsed.conversions(), got = call.args.size() - 1;
  if (want != got) {
    diags_.error(call.range, "printf: the format has " + std::to_string(want) + " conversion" +
                                 (want == 1 ? "" : "s") + " but " + std::to_string(got) +
                                 " argument" + (got == 1 ? " was" : "s were") + " given");
    return Type::none();
  }
  size_t arg = 1;
  for (auto &piece : parsed.pieces) {
    if (!piece.conversion)
      continue;
    const Expr &e = *call.args[arg++];
    const Type &t = info_.type_of(&e);
    if (t.is_none())
      continue;
    if (!format_accepts(piece.conversion, t))
      diags_.error(e.range, "printf: " + conversion_name(piece) + " expects " +
                                conversion_wants(piece.conversion) + ", not " + t.name());
  }
  return Type::void_type();
}

Type TypeChecker::check_exit(const Call &call) {
  if (!call.args.empty())
    expect_int(*call.args[0], check_expr(*call.args[0]), "the exit code");
  return Type::void_type();
}

Type TypeChecker::check_del(const Call &call) {
  auto *map = dyn_cast<MapRef>(call.args[0]);
  if (!map) {
    check_expr(*call.args[0]);
    diags_.error(call.args[0]->range, "delete()'s first argument must be a map");
    return Type::none();
  }
  if (call.args.size() == 2 && !map->keys.empty()) {
    diags_.error(call.range, "delete() takes either @m[key] or @m, key, not both");
    return Type::none();
  }
  auto it = info_.maps.find(map->name);
  if (it == info_.maps.end()) {
    unknown_map_reads_.push_back(map);
    return Type::void_type();
  }
  const MapInfo &m = it->second;
  if (m.value.is_bucketed()) {
    diags_.error(call.range, "delete() cannot remove one key of a histogram or tseries; use "
                             "clear()");
    return Type::none();
  }
  Type key;
  if (call.args.size() == 2) {
    key = storage_type(check_expr(*call.args[1]));
  } else {
    key = check_map_key(*map);
  }
  if (m.key.is_none() != key.is_none() || (!key.is_none() && !m.key.compatible(key)))
    diags_.error(call.range, "delete(): " + map->name + " has " +
                                 (m.key.is_none() ? std::string("no key") : "keys of type " + m.key.name()) +
                                 ", not " + (key.is_none() ? std::string("no key") : key.name()));
  return Type::boolean();  // whether a key was there to delete, as today's bpftrace
}

// str(p[, n]): the NUL-terminated string at address p (or a string value), at most n bytes
// with the terminator (bpftrace's meaning: str(p, 5) keeps 4 characters). n may be computed
// at run time: the string then has the room of max_strlen and is cut at n when read.
// str($1) and str($1 + k) are the command-line argument's text (from its k-th byte).
Type TypeChecker::check_str(const Call &call) {
  uint32_t size = info_.config.max_strlen;
  if (call.args.size() == 2) {
    Type length = check_expr(*call.args[1]);
    if (auto n = const_int(*call.args[1])) {
      if (*n <= 0 || *n > kMaxStrlen) {
        diags_.error(call.args[1]->range, "str()'s length must be from 1 to " +
                                              std::to_string(kMaxStrlen));
        return Type::none();
      }
      size = static_cast<uint32_t>(*n);
    } else if (!expect_int(*call.args[1], length, "str()'s length")) {
      return Type::none();
    }
  }
  if (auto text = positional_text(*call.args[0])) {
    std::string &kept = info_.constant_strings[&call] = *text;
    if (kept.size() >= size)
      kept.resize(size - 1);
    return Type::string(static_cast<uint32_t>(kept.size() + 1));
  }
  Type arg = check_expr(*call.args[0]);
  if (arg.is_none())
    return arg;
  if (arg.is_string())
    return Type::string(std::min(size, arg.size));
  if (!arg.is_scalar()) {
    diags_.error(call.args[0]->range, "str() needs an address or a string, not " + arg.name());
    return Type::none();
  }
  info_.user_space[&call] = arg.is_pointer() ? arg.user_space : probe_reads_user_space();
  // bpftrace's rule: str(p) under a max_strlen below 1024 keeps max_strlen characters (one
  // byte more for the terminator), and one that fills them prints with str_trunc_trailer.
  if (call.args.size() == 1 && info_.config.max_strlen_set && size < 1024) {
    Type cut = Type::string(size + 1);
    cut.may_be_cut = true;
    return cut;
  }
  return Type::string(size);
}

// The text of $N (a string or a number alike) or of $N + k, a constant k from 0 to its length
// (bpftrace's pointer arithmetic on a positional parameter), else nothing.
std::optional<std::string> TypeChecker::positional_text(const Expr &e) {
  auto *p = dyn_cast<Positional>(&e);
  auto *sum = dyn_cast<Binary>(&e);
  if (sum && sum->op == BinaryOp::Add)
    p = dyn_cast<Positional>(sum->lhs);
  if (!p || p->index == 0)
    return std::nullopt;
  Type t = check_expr(*p);
  std::string text = p->index <= env_.positional.size() ? env_.positional[p->index - 1] : "";
  if (!sum)
    return text;
  if (!t.is_string())  // a number plus k is a number
    return std::nullopt;
  check_expr(*sum->rhs);
  auto k = const_int(*sum->rhs);
  if (!k || *k < 0 || static_cast<uint64_t>(*k) > text.size()) {
    diags_.error(sum->rhs->range, "only a constant from 0 to the argument's length (" +
                                      std::to_string(text.size()) + ") may be added to $" +
                                      std::to_string(p->index));
    return std::string();
  }
  info_.types[sum] = t;
  return text.substr(static_cast<size_t>(*k));
}

// A string known when the script compiles: a literal, or str() of a positional parameter
// (kaddr(str($1))). Checks `e`; reports nothing.
std::optional<std::string> TypeChecker::literal_text(const Expr &e) {
  if (auto *lit = dyn_cast<StrLit>(&e)) {
    info_.types[lit] = Type::string(static_cast<uint32_t>(lit->value.size() + 1));
    return lit->value;
  }
  if (auto *call = dyn_cast<Call>(&e); call && call->name == "str") {
    check_expr(e);
    if (auto c = info_.constant_strings.find(call); c != info_.constant_strings.end())
      return c->second;
  }
  return std::nullopt;
}

namespace {
// The kernel's default kernel.perf_event_max_stack: bpf_get_stackid walks no deeper.
constexpr uint32_t kMaxStackDepth = 127;
}  // namespace

Type TypeChecker::check_kstack(const Builtin &) {
  return Type::stack(StackKind::Kernel, kMaxStackDepth, info_.config.stack_mode);
}

Type TypeChecker::check_ustack(const Builtin &) {
  return Type::stack(StackKind::User, kMaxStackDepth, info_.config.stack_mode);
}

Type TypeChecker::check_kstack_n(const Call &call) { return check_stack_call(call, StackKind::Kernel); }
Type TypeChecker::check_ustack_n(const Call &call) { return check_stack_call(call, StackKind::User); }

// kstack(N), kstack(perf), kstack(raw, N): the mode is a bare word, the depth a literal.
Type TypeChecker::check_stack_call(const Call &call, StackKind kind) {
  StackMode mode = info_.config.stack_mode;
  uint32_t depth = kMaxStackDepth;
  for (size_t i = 0; i < call.args.size(); i++) {
    const Expr &arg = *call.args[i];
    auto *word = dyn_cast<Builtin>(&arg);
    if (word && i == 0 && (word->name == "bpftrace" || word->name == "perf" || word->name == "raw" ||
                           word->name == "build_id")) {
      mode = word->name == "perf"       ? StackMode::Perf
             : word->name == "raw"      ? StackMode::Raw
             : word->name == "build_id" ? StackMode::BuildId
                                        : StackMode::Bpftrace;
      continue;
    }
    check_expr(arg);
    auto n = const_int(arg);
    if (!n || *n < 1 || *n > kMaxStackDepth) {
      diags_.error(arg.range, call.name + "()'s " + (word ? "mode must be bpftrace, perf, raw or build_id"
                                                          : "depth must be an integer literal "
                                                            "from 1 to 127"));
      return Type::none();
    }
    depth = static_cast<uint32_t>(*n);
  }
  return Type::stack(kind, depth, mode);
}

Type TypeChecker::check_elapsed(const Builtin &) { return u64(); }
Type TypeChecker::check_ncpus(const Builtin &) { return u64(); }
Type TypeChecker::check_jiffies(const Builtin &) { return u64(); }
Type TypeChecker::check_numaid(const Builtin &) { return u32(); }

// ppid: the current task's real_parent->pid (bpftrace's definition).
Type TypeChecker::check_ppid(const Builtin &node) {
  return bind_task_path(node, "real_parent", "pid", 4) ? u32() : Type::none();
}

Type TypeChecker::check_usermode(const Builtin &node) {
  for (auto &p : info_.probes[probe_]) {
    // BEGIN and END run in rbt's own system call (BPF_PROG_TEST_RUN): user mode, 1, as bpftrace.
    if (!has_registers(p.kind) && p.kind != ProbeKind::Begin && p.kind != ProbeKind::End) {
      diags_.error(node.range, "usermode needs the registers of a kprobe, uprobe, usdt, profile, "
                               "software or hardware probe, not of " +
                                   std::string(probe_kind_name(p.kind)));
      return Type::none();
    }
  }
  return u64();
}
Type TypeChecker::check_cpid(const Builtin &node) {
  if (!env_.has_command)
    diags_.error(node.range, "cpid needs a command to trace: run rbt with -c 'COMMAND'");
  return u32();
}

// The probed function: in kprobes a kernel symbol (ksym), as in bpftrace, so that it shares a
// map with ksym() values (bpftrace's xfsdist.bt); elsewhere its name, a constant per attach
// point.
Type TypeChecker::check_func(const Builtin &node) {
  size_t longest = 0;
  bool kernel = !info_.probes[probe_].empty();
  for (auto &p : info_.probes[probe_]) {
    kernel = kernel && (p.kind == ProbeKind::Kprobe || p.kind == ProbeKind::Kretprobe);
    if (p.kind != ProbeKind::Uprobe && p.kind != ProbeKind::Uretprobe &&
        p.kind != ProbeKind::Kprobe && p.kind != ProbeKind::Kretprobe &&
        p.kind != ProbeKind::Usdt) {
      diags_.error(node.range, std::string("func is not available in ") + probe_kind_name(p.kind) +
                                   " probes");
      return Type::none();
    }
    longest = std::max(longest, p.func.size());
  }
  return kernel ? Type::symbol(false) : Type::string(static_cast<uint32_t>(longest + 1));
}

// has_key(@m, key...): whether the map holds the key.
Type TypeChecker::check_has_key(const Call &call) {
  auto *map = dyn_cast<MapRef>(call.args[0]);
  if (!map || !map->keys.empty()) {
    diags_.error(call.args[0]->range, "has_key()'s first argument must be a map, as in "
                                      "has_key(@m, key)");
    return Type::none();
  }
  auto it = info_.maps.find(map->name);
  if (it == info_.maps.end()) {
    unknown_map_reads_.push_back(map);
    return Type::boolean();
  }
  if (it->second.value.is_bucketed()) {
    diags_.error(call.range, "has_key() cannot look into a histogram or tseries");
    return Type::none();
  }
  std::vector<Type> keys;
  for (size_t i = 1; i < call.args.size(); i++)
    keys.push_back(storage_type(check_expr(*call.args[i])));
  Type key = keys.size() == 1 ? keys[0] : Type::tuple(keys);
  if (it->second.key.is_none() || !it->second.key.compatible(key))
    diags_.error(call.range, "has_key(): " + map->name + " has " +
                                 (it->second.key.is_none() ? std::string("no key")
                                                           : "keys of type " + it->second.key.name()) +
                                 ", not " + key.name());
  return Type::boolean();
}

Type TypeChecker::check_len(const Call &call) {
  auto *map = dyn_cast<MapRef>(call.args[0]);
  if (!map) {  // len(ustack), len($s): the frames of a kernel or user stack (bpftrace)
    Type t = check_expr(*call.args[0]);
    if (t.is_stack() && (t.stack_kind == StackKind::User || t.stack_kind == StackKind::Kernel))
      return Type::integer(64, true);
    if (t.is_none())
      return t;
  }
  if (!map || !map->keys.empty()) {
    diags_.error(call.args[0]->range, "len()'s argument must be a map (len(@m)) or a stack (len(ustack))");
    return Type::none();
  }
  if (!info_.maps.count(map->name))
    unknown_map_reads_.push_back(map);
  len_maps_.insert(map);
  return Type::integer(64, true);
}

namespace {
bool is_string_arg(TypeChecker &, const Type &t) { return t.is_none() || t.is_string(); }
}  // namespace

Type TypeChecker::check_strlen(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (!is_string_arg(*this, t))
    diags_.error(call.args[0]->range, "strlen() needs a string, not " + t.name());
  return u64();
}

// syscall_name(nr): a string, looked up in BPF in a table of the build host's syscall numbers.
Type TypeChecker::check_syscall_name(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], t, "syscall_name()'s syscall number"))
    return Type::none();
  return Type::string(kSyscallNameSize);
}

// signal_name(sig): a string, looked up in BPF in a table of the signals' descriptions.
Type TypeChecker::check_signal_name(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], t, "signal_name()'s signal number"))
    return Type::none();
  return Type::string(kSignalNameSize);
}

Type TypeChecker::check_strncmp(const Call &call) {
  for (int i = 0; i < 2; i++) {
    Type t = check_expr(*call.args[i]);
    if (!is_string_arg(*this, t))
      diags_.error(call.args[i]->range, "strncmp() compares strings, not " + t.name());
  }
  // The length may be any integer (bpftrace: int64 n); past both strings it changes nothing.
  Type n = check_expr(*call.args[2]);
  expect_int(*call.args[2], n, "strncmp()'s length");
  return u64();
}

Type TypeChecker::check_strcontains(const Call &call) {
  for (int i = 0; i < 2; i++) {
    Type t = check_expr(*call.args[i]);
    // strcontains(rstack, "text"): whether a frame's label contains text (lower_rstack.cpp).
    if (i == 0 && t.is_stack() && t.stack_kind == StackKind::Ruby)
      continue;
    if (!is_string_arg(*this, t))
      diags_.error(call.args[i]->range, std::string("strcontains() searches strings") +
                                               (i == 0 ? " or an rstack's frame labels" : "") +
                                               ", not " + t.name());
  }
  return Type::boolean();
}

Type TypeChecker::check_bswap(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], t, "bswap()'s argument"))
    return Type::none();
  return t.is_none() ? t : Type::integer(t.size * 8, false);
}

Type TypeChecker::check_ksym(const Call &call) {
  Type t = check_expr(*call.args[0]);
  return expect_int(*call.args[0], t, "ksym()'s address") ? Type::symbol(false) : Type::none();
}

Type TypeChecker::check_usym(const Call &call) {
  Type t = check_expr(*call.args[0]);
  return expect_int(*call.args[0], t, "usym()'s address") ? Type::symbol(true) : Type::none();
}

// kaddr("sym"): a kernel symbol's address, from /proc/kallsyms when the script compiles.
Type TypeChecker::check_kaddr(const Call &call) {
  auto name = literal_text(*call.args[0]);
  if (!name) {
    diags_.error(call.args[0]->range, "kaddr() takes a symbol name as a string literal");
    return Type::none();
  }
  auto addr = env_.kernel_symbol ? env_.kernel_symbol(*name) : std::nullopt;
  if (!addr) {
    diags_.error(call.args[0]->range, "kaddr(): no kernel symbol '" + *name +
                                          "' in /proc/kallsyms");
    return Type::none();
  }
  info_.constants[&call] = *addr;
  return Type::integer(64, false);
}

// percpu_kaddr("var"[, cpu]): the address of a per-CPU kernel variable on this CPU, or on
// `cpu`, as bpftrace: a pointer to the variable's type from the kernel's BTF, so
// *percpu_kaddr("process_counts", 0) reads it and a struct's fields are reachable.
Type TypeChecker::check_percpu_kaddr(const Call &call) {
  auto name = literal_text(*call.args[0]);
  if (!name) {
    diags_.error(call.args[0]->range, "percpu_kaddr() takes a variable name as a string literal");
    return Type::none();
  }
  if (call.args.size() == 2) {
    Type cpu = check_expr(*call.args[1]);
    if (!expect_int(*call.args[1], cpu, "percpu_kaddr()'s cpu"))
      return Type::none();
  }
  auto var = env_.kernel_percpu_var ? env_.kernel_percpu_var(*name) : std::nullopt;
  if (!var) {
    diags_.error(call.args[0]->range, "percpu_kaddr(): the kernel's BTF has no per-CPU variable '" +
                                          *name + "'");
    return Type::none();
  }
  if (var->kind != FieldLayout::Kind::Int && var->kind != FieldLayout::Kind::Record) {
    diags_.error(call.args[0]->range, "percpu_kaddr(): '" + *name + "' is a " + var->type_name +
                                          "; rbt reads per-CPU integers and structs");
    return Type::none();
  }
  // The verifier finds the variable's address by name in kallsyms, which lists per-CPU
  // variables only with CONFIG_KALLSYMS_ALL: say so here rather than through its log.
  if (env_.kernel_symbol && !env_.kernel_symbol(*name)) {
    diags_.error(call.args[0]->range,
                 "percpu_kaddr(): the kernel cannot give BPF programs the address of '" + *name +
                     "': it is not in /proc/kallsyms (a kernel built without CONFIG_KALLSYMS_ALL)");
    return Type::none();
  }
  var->name = *name;
  info_.percpu_vars[&call] = *var;
  return Type::pointer(field_type(*var, true, false), false);
}

// Helpers and kfuncs the kernel gives to BTF-typed tracing programs only: every attach point
// of the probe must be of one of `kinds`, else "`needs`, not KIND" at the call.
bool TypeChecker::require_probe_kinds(const Call &call, std::initializer_list<ProbeKind> kinds,
                                      const std::string &needs) {
  for (auto &p : info_.probes[probe_])
    if (std::find(kinds.begin(), kinds.end(), p.kind) == kinds.end()) {
      diags_.error(call.range, needs + ", not " + probe_kind_name(p.kind));
      return false;
    }
  return true;
}

// socket_cookie(sk): a socket's cookie, 0 for a null socket, as bpftrace. The kernel gives
// the helper to BTF-typed tracing programs only, with the socket as the probe got it: in rbt
// that is a rawtracepoint probe (it then loads as one, tp_btf), with `args.sk` or `argN`.
Type TypeChecker::check_socket_cookie(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], t, "socket_cookie()'s socket"))
    return Type::none();
  if (!require_probe_kinds(call, {ProbeKind::RawTracepoint},
                           "socket_cookie() needs a rawtracepoint probe (the kernel allows it in "
                           "tracing programs)"))
    return Type::none();
  return u64();
}

// skboutput("path", skb, len, offset): bpf_skb_output, a helper the kernel gives to BTF-typed
// tracing programs only (a rawtracepoint probe, which then loads as tp_btf); the skb must be
// the pointer as the probe got it. The path is a literal: user space opens the file.
Type TypeChecker::check_skboutput(const Call &call) {
  if (!expect_literal(*call.args[0], "skboutput()'s pcap file path"))
    return Type::none();
  for (size_t i = 1; i < 4; i++) {
    Type t = check_expr(*call.args[i]);
    if (!expect_int(*call.args[i], t, i == 1 ? "skboutput()'s skb" : i == 2 ? "skboutput()'s length"
                                                                    : "skboutput()'s offset"))
      return Type::none();
  }
  if (!require_probe_kinds(call, {ProbeKind::RawTracepoint},
                           "skboutput() needs a rawtracepoint probe (the kernel allows "
                           "bpf_skb_output in tracing programs)"))
    return Type::none();
  return Type::integer(64, true);
}

// comm(pid): the name of the process (task) with that pid, found with the kfunc
// bpf_task_from_pid. The kernel gives it to BTF-typed tracing programs, which in rbt are iter
// probes and rawtracepoint ones (these then load as tp_btf). Its comm is read at task_struct's
// comm offset from BTF (SemaInfo::constants).
Type TypeChecker::check_comm_of_pid(const Call &call) {
  if (call.args.empty())
    return Type::string(16);  // comm(): the current task's, as comm
  Type t = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], t, "comm()'s pid"))
    return Type::none();
  if (!require_probe_kinds(call, {ProbeKind::Iter, ProbeKind::RawTracepoint},
                           "comm(pid) needs an iter or rawtracepoint probe (the kernel finds a "
                           "task by pid for tracing programs only)"))
    return Type::none();
  const RecordLayout *task = find_struct("task_struct");
  const FieldLayout *comm = task ? task->find("comm") : nullptr;
  if (!comm || comm->size != 16) {
    diags_.error(call.range, "comm(pid) needs task_struct's comm in the kernel's BTF");
    return Type::none();
  }
  info_.constants[&call] = comm->offset;
  return Type::string(16);
}

// uaddr("sym"): a symbol's address in the probed binary. As in bpftrace it is a user-space
// pointer to an unsigned integer of the symbol's size (1, 2, 4 or 8 bytes; uint64 otherwise),
// so *uaddr("GLOBAL") reads the variable. In a binary loaded where it was linked that is the
// ELF st_value; in a PIE or library, which run at a bias, a uprobe on one place finds the
// bias at run time from its own address (see uaddr_anchors). Elsewhere (a uretprobe, USDT,
// several places) the address stays as linked.
Type TypeChecker::check_uaddr(const Call &call) {
  auto name = literal_text(*call.args[0]);
  if (!name) {
    diags_.error(call.args[0]->range, "uaddr() takes a symbol name as a string literal");
    return Type::none();
  }
  std::optional<Environment::UserSymbol> sym;
  for (auto &p : info_.probes[probe_]) {
    if (p.kind != ProbeKind::Uprobe && p.kind != ProbeKind::Uretprobe && p.kind != ProbeKind::Usdt) {
      diags_.error(call.range, std::string("uaddr() needs a uprobe, uretprobe or usdt probe, not ") +
                                   probe_kind_name(p.kind));
      return Type::none();
    }
    auto here = env_.user_symbol ? env_.user_symbol(p, *name) : std::nullopt;
    if (!here) {
      diags_.error(call.args[0]->range, "uaddr(): no symbol '" + *name + "' in " + p.target);
      return Type::none();
    }
    if (sym && sym->address != here->address) {
      diags_.error(call.range, "uaddr(): '" + *name + "' has different addresses in the "
                                   "binaries this probe attaches to");
      return Type::none();
    }
    sym = here;
  }
  info_.constants[&call] = sym ? sym->address : 0;
  const auto &places = info_.probes[probe_];
  if (sym && sym->relocated && places.size() == 1 && places[0].kind == ProbeKind::Uprobe) {
    const ProbeDesc &p = places[0];
    auto func = p.func.empty() ? std::nullopt : env_.user_symbol(p, p.func);
    if (p.func.empty() || func)
      info_.uaddr_anchors[&call] = (func ? func->address : 0) + p.offset;
  }
  uint64_t size = sym ? sym->size : 8;
  unsigned bits = size == 1 || size == 2 || size == 4 ? static_cast<unsigned>(size * 8) : 64;
  return Type::pointer(Type::integer(bits, false), true);
}

// reg("ip"): a register of the probed context, by its x86-64 name.
Type TypeChecker::check_reg(const Call &call) {
  auto *name = dyn_cast<StrLit>(call.args[0]);
  if (!name || pt_regs_offset(name->value) < 0) {
    diags_.error(call.args[0]->range, "reg() takes a register name such as \"ip\", \"sp\" or "
                                      "\"di\"");
    return Type::none();
  }
  for (auto &p : info_.probes[probe_]) {
    if (p.kind != ProbeKind::Kprobe && p.kind != ProbeKind::Kretprobe &&
        p.kind != ProbeKind::Uprobe && p.kind != ProbeKind::Uretprobe &&
        p.kind != ProbeKind::Usdt && p.kind != ProbeKind::Profile &&
        p.kind != ProbeKind::Software && p.kind != ProbeKind::Hardware) {
      diags_.error(call.range, std::string("reg() has no registers in ") + probe_kind_name(p.kind) +
                                   " probes");
      return Type::none();
    }
  }
  info_.types[name] = Type::string(static_cast<uint32_t>(name->value.size() + 1));
  return u64();
}

Type TypeChecker::check_count(const Call &) { return Type::aggregation(TypeKind::Count); }

namespace {
// sum/min/max/avg/stats/hist: one integer argument; the aggregation keeps its signedness.
Type numeric_aggregation(TypeChecker &, const Type &arg, TypeKind kind) {
  return arg.is_none() ? Type::none() : Type::aggregation(kind, arg.is_signed);
}
}  // namespace

#define RBT_NUMERIC_AGG(id, kind)                                                                  \
  Type TypeChecker::check_##id(const Call &call) {                                                 \
    Type arg = check_expr(*call.args[0]);                                                          \
    if (!expect_int(*call.args[0], arg, #id "()'s argument"))                                     \
      return Type::none();                                                                         \
    return numeric_aggregation(*this, arg, kind);                                                  \
  }
RBT_NUMERIC_AGG(sum, TypeKind::Sum)
RBT_NUMERIC_AGG(min, TypeKind::Min)
RBT_NUMERIC_AGG(max, TypeKind::Max)
RBT_NUMERIC_AGG(avg, TypeKind::Avg)
RBT_NUMERIC_AGG(stats, TypeKind::Stats)
#undef RBT_NUMERIC_AGG

// hist(n[, k]): k (0..5, a literal) splits each power of two into 2^k linear buckets.
Type TypeChecker::check_hist(const Call &call) {
  Type arg = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], arg, "hist()'s argument"))
    return Type::none();
  Type t = numeric_aggregation(*this, arg, TypeKind::Hist);
  if (call.args.size() == 2) {
    check_expr(*call.args[1]);
    auto k = const_int(*call.args[1]);
    if (!k || *k < 0 || *k > 5) {
      diags_.error(call.args[1]->range, "hist()'s second argument must be an integer literal "
                                        "from 0 to 5");
      return Type::none();
    }
    t.hist_k = static_cast<uint32_t>(*k);
  }
  return t;
}

Type TypeChecker::check_lhist(const Call &call) {
  Type arg = check_expr(*call.args[0]);
  bool ok = expect_int(*call.args[0], arg, "lhist()'s value");
  int64_t params[3] = {};
  static const char *names[] = {"min", "max", "step"};
  for (int i = 0; i < 3; i++) {
    check_expr(*call.args[i + 1]);
    auto v = const_int(*call.args[i + 1]);
    if (!v) {
      diags_.error(call.args[i + 1]->range,
                   std::string("lhist()'s ") + names[i] + " must be an integer literal");
      ok = false;
    } else {
      params[i] = *v;
    }
  }
  if (!ok)
    return Type::none();
  auto [min, max, step] = params;
  if (step <= 0) {
    diags_.error(call.args[3]->range, "lhist()'s step must be positive");
    return Type::none();
  }
  if (max <= min) {
    diags_.error(call.range, "lhist()'s max must be greater than its min");
    return Type::none();
  }
  // max - min in unsigned arithmetic: lhist(x, INT64_MIN, 0, 1) overflowed int64 and passed.
  if ((static_cast<uint64_t>(max) - static_cast<uint64_t>(min)) / static_cast<uint64_t>(step) >
      1000) {
    diags_.error(call.range, "lhist() would have more than 1000 buckets; use a larger step");
    return Type::none();
  }
  return Type::lhist(min, max, step);
}

}  // namespace rbt::sema
