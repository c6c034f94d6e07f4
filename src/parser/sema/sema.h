#pragma once
// Semantic analysis: resolves attach points, checks types and contexts, and records what it
// learned in side tables (SemaInfo) that codegen reads. The AST itself is never annotated.

#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ast.h"
#include "builtins.h"
#include "diagnostics.h"
#include "manifest.h"
#include "record_layout.h"
#include "result.h"
#include "types.h"

namespace rbt::sema {

// Length of str() results without an explicit length (bpftrace's max_strlen default).
constexpr uint32_t kDefaultStrlen = 64;
// The largest max_strlen (and str() length) a script may ask for: long strings live in per-CPU
// scratch pages of 32 KiB (codegen), and an event or key may hold one with other values.
constexpr uint32_t kMaxStrlen = 16384;
// `==` and `!=` of arrays and buffers are unrolled in BPF: this bounds the code they make.
constexpr uint32_t kMaxComparedBytes = 256;
// The string syscall_name() returns: each entry of its table (stdlib/bpf/syscall_names.cmake).
constexpr uint32_t kSyscallNameSize = 32;
constexpr uint32_t kSignalNameSize = 32;  // RBT_SIGNAL_NAME_SIZE in stdlib/bpf/strings.bpf.c

// The script's `config = { ... }` block, with bpftrace's defaults.
struct ScriptConfig {
  uint32_t max_strlen = kDefaultStrlen;
  uint64_t max_map_keys = 4096;
  bool print_maps_on_exit = true;
  // Whether max_strlen was set (config block or environment): only then does a str() that
  // fills it print str_trunc_trailer. rbt's own default (64) keeps bpftrace's default look
  // (its default, 1024, never shows a trailer).
  bool max_strlen_set = false;
  std::string str_trunc_trailer = "..";
  uint64_t max_cat_bytes = 0;  // 0: not set (Manifest::max_cat_bytes)
  StackMode stack_mode = StackMode::Bpftrace;
  MissingProbes missing_probes = MissingProbes::Error;
  // BPFTRACE_DUMMY_TS_MAP=@ts (a test hook, as in bpftrace): tseries() takes its time from the
  // scalar map @ts instead of the clock, so a test can choose the intervals it fills.
  std::string dummy_ts_map;
};

// The type of `config`: a record of the configuration in effect (check_config.cpp), and the
// word of a stack mode ("perf").
Type config_record_type();
const char *stack_mode_name(StackMode mode);

// Config set from the environment (BPFTRACE_MAX_STRLEN=...): as in bpftrace, it takes
// precedence over the script's config block. The driver reads and validates it.
struct ConfigOverrides {
  std::optional<uint32_t> max_strlen;
  std::optional<uint64_t> max_map_keys;
  std::optional<bool> print_maps_on_exit;
  std::optional<std::string> str_trunc_trailer;  // BPFTRACE_STR_TRUNC_TRAILER
  std::optional<uint64_t> max_cat_bytes;         // BPFTRACE_MAX_CAT_BYTES
  std::optional<StackMode> stack_mode;
  std::string dummy_ts_map;  // BPFTRACE_DUMMY_TS_MAP (ScriptConfig::dummy_ts_map)
};

struct MapInfo {
  std::string name;
  Type key;    // none() when the map takes no key
  Type value;  // storage type: aggregation, or a normalized int/string/tuple
  // Per key part, the builtin or function it was written as ("comm", "pid", "ustack"), or ""
  // for other expressions; profile formats name their labels with it.
  std::vector<std::string> key_names;
};

// A scratch variable; one per declaration (first assignment in a scope).
struct VarInfo {
  std::string name;
  Type type;
  bool declared_type = false;  // `let $x: uint16`: assignments convert to it, never widen it
  bool untyped_let = false;    // `let $x;`: int64 for now; the first other value retypes it
  // Used after the block that assigned it ended, as scripts written for bpftrace 0.17 do
  // (its variables lived for the whole probe): one variable for the probe, zero until
  // assigned (type_check.cpp: check_var).
  bool probe_scoped = false;
  // The type bpftrace gives the variable (the widest value assigned, literals as the smallest
  // signed integer, tuples packed with their elements' own widths): what sizeof($x) reports.
  // rbt stores integers in variables as 64 bits (type) whatever this says.
  Type natural = {};
};

// `let @m = lruhash(N);`: the BPF map type and capacity the script asked for.
struct MapDeclInfo {
  std::string map_type;  // hash, lruhash, percpuhash, percpulruhash
  uint32_t max_entries = 0;
};

// getopt("name"[, default[, description]]): a named parameter, given as --name=value (or
// --name, for a boolean) after `--` on the command line. Like $1, its value is a constant
// compiled into the program.
struct NamedParam {
  Type type;                 // the default's: boolean (no default), int64 or string
  std::string default_text;  // the default as written, for the "different defaults" check
  std::string description;   // the optional third argument, listed when a name is unknown
  std::string value;         // the value compiled in: "0"/"1", a decimal number, or the text
};

struct SemaInfo {
  std::unordered_map<const ast::Node *, Type> types;            // every expression
  std::map<std::string, MapInfo> maps;                          // ordered by name
  std::unordered_map<const ast::Probe *, std::vector<ProbeDesc>> probes;
  std::unordered_map<const ast::Node *, BuiltinId> builtins;    // Builtin and Call nodes
  std::unordered_map<const ast::Node *, VarInfo *> vars;        // Var and AssignVar nodes
  std::vector<std::unique_ptr<VarInfo>> var_storage;
  // Per probe, its probe-scoped variables by name (VarInfo::probe_scoped); kept across the
  // checker's passes, so a pass binds every assignment of the name to the one variable.
  // The use that made it so is where the warning points.
  struct ProbeScoped {
    VarInfo *var = nullptr;
    const ast::Node *first_use = nullptr;
  };
  std::map<std::pair<const ast::Probe *, std::string>, ProbeScoped> probe_scoped_vars;
  std::vector<std::string> positional;     // the values of $1..$N
  ScriptConfig config;
  std::vector<Diagnostic> attach_errors;  // attach points that did not parse or expand
  std::vector<Diagnostic> skipped_probes;  // missing_probes = warn: those left out
  std::map<std::string, const RecordLayout *> records;  // tracepoint `args` records by name
  // sizeof/offsetof, enumerators, `unroll ($N)`: their values.
  std::unordered_map<const ast::Node *, uint64_t> constants;
  // uaddr() in a PIE or library: the probe's own address as linked. The probe's instruction
  // pointer minus it is the load bias, added to the symbol's linked address at run time.
  std::unordered_map<const ast::Node *, uint64_t> uaddr_anchors;
  // str($1), str($1 + k): the text they stand for, known when the script compiles.
  std::unordered_map<const ast::Node *, std::string> constant_strings;
  // `*n` of an integer (bpftrace: the 64-bit value at that address, as `*(int64 *)n`): whether
  // the address is in user space (the probe reads user memory, probe_reads_user_space).
  std::unordered_map<const ast::Node *, bool> integer_derefs;
  // percpu_kaddr() calls: the variable, named and typed as the kernel's BTF has it.
  std::unordered_map<const ast::Node *, FieldLayout> percpu_vars;
  // Structs the script defines (`struct foo { ... }`), before the kernel's of the same name.
  std::map<std::string, std::shared_ptr<RecordLayout>> script_structs;
  // Enums the script defines, by name (anonymous ones "enum#N"), and their enumerators:
  // name → (enum, value).
  std::map<std::string, EnumDesc> script_enums;
  std::map<std::string, std::pair<std::string, int64_t>> script_enumerators;
  std::unordered_map<const ast::Node *, const FieldLayout *> fields;  // FieldAccess → field
  // Builtins that follow kernel pointers from curtask (ppid, pcomm): each step's field, from
  // BTF; every step but the last is a pointer.
  std::unordered_map<const ast::Node *, std::vector<const FieldLayout *>> task_paths;
  // str() calls and casts: whether the address they read is in user space.
  std::unordered_map<const ast::Node *, bool> user_space;
  std::map<std::string, MapDeclInfo> map_decls;  // by map name
  // A probe naming tracepoints whose `args` differ (sys_enter_execve, sys_enter_execveat):
  // each attach point's own record by its name; fields are found by name in it when lowering.
  std::map<std::string, const RecordLayout *> args_layouts;
  std::map<std::string, NamedParam> named_params;  // by name: what getopt() calls read
  // Command-line mistakes found only once the script is known (an unknown --name, a value
  // that is not the default's type): usage errors (exit status 2), not script errors.
  std::vector<std::string> usage_errors;
  // `-- --help` and the script reads no --help itself: list its named parameters, run nothing.
  bool named_params_help = false;
  // Structs reached through a pointer and held by value where they are (print(*p)): the Struct
  // type their bytes are copied as. Where they are stored ($s = *p, @m = *p, a key, a tuple),
  // the variable's, map's or tuple's own type says it.
  std::unordered_map<const ast::Node *, Type> held_structs;

  const Type &type_of(const ast::Node *n) const;
};


// What the checker may know about the machine and the command line. The driver fills it from
// the runtime (probe expansion, tracepoint formats, kernel BTF), so this library needs neither
// libbpf nor tracefs, and tests can describe a machine of their own.
struct Environment {
  bool unsafe = false;                  // --unsafe: allow system() and friends
  bool has_command = false;             // -c: cpid has a value
  std::vector<std::string> positional;  // $1..$N
  // Named parameters after `--`: --name=value, or --name alone (no value).
  std::map<std::string, std::optional<std::string>> named;
  ConfigOverrides config_env;           // BPFTRACE_* config variables
  // Resolves library names and expands wildcards; unset: attach points stay as written.
  std::function<Result<std::vector<ProbeDesc>>(const ProbeDesc &)> expand_probe;
  // The `args` record of a tracepoint, or null when unknown.
  std::function<const RecordLayout *(const ProbeDesc &)> tracepoint_format;
  // A kernel struct by name (from BTF), or null when unknown.
  std::function<const RecordLayout *(const std::string &)> kernel_struct;
  // `args` of a rawtracepoint: its parameters from the kernel's BTF (KernelTypes).
  std::function<const RecordLayout *(const ProbeDesc &)> raw_tracepoint_args;
  // The value of a kernel enum's enumerator (TCP_SYN_SENT), when BTF has it.
  std::function<std::optional<int64_t>(const std::string &)> kernel_enum;
  // The enumerators of the kernel's `enum name` (BTF), in order; empty when unknown.
  std::function<std::vector<std::pair<std::string, int64_t>>(const std::string &)>
      kernel_enum_type;
  // kaddr(): a kernel symbol's address; uaddr(): a symbol's address in an expanded probe's
  // binary as linked.
  std::function<std::optional<uint64_t>(const std::string &)> kernel_symbol;
  // percpu_kaddr(): a per-CPU kernel variable's type (its BTF VAR), named as the variable.
  std::function<std::optional<FieldLayout>(const std::string &)> kernel_percpu_var;
  struct UserSymbol {
    uint64_t address;  // as linked
    uint64_t size;     // ELF st_size: uaddr()'s pointee is an integer of this size if 1/2/4/8
    bool relocated;    // the binary is a PIE or a library: it runs at an address plus a bias
  };
  std::function<std::optional<UserSymbol>(const ProbeDesc &probe, const std::string &name)>
      user_symbol;
};

// Integers are stored as 64 bits in maps and events; tuples are normalized element-wise.
Type storage_type(const Type &t);

// Checks `program`, reporting problems to `diags`. Returns false when any error was reported,
// or a usage error was recorded in info.usage_errors.
bool analyse(const ast::Program &program, DiagnosticEngine &diags, SemaInfo &info,
             const Environment &env = {});
// Gives the getopt() parameters their values from env.named (check_getopt.cpp); mistakes go
// to info.usage_errors. analyse() calls it once the types have settled.
void bind_named_params(SemaInfo &info, const Environment &env);

}  // namespace rbt::sema
