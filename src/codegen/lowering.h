#pragma once
// Lowering of one typed AST to LLVM IR, split by node family across lower_probe.cpp,
// lower_stmt.cpp, lower_expr.cpp, lower_aggregation.cpp and lower_builtins.cpp.
//
// Value convention: integers, booleans and pointers are i64 in registers; strings and tuples are
// pointers to bytes laid out as their rbt::Type says (usually a stack slot); a record is a
// pointer into the context (tracepoint args) or, when reached through a pointer, an i64 address.

#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "ast.h"
#include "debug_info.h"
#include "ir_builder_bpf.h"
#include "resources.h"
#include "sema/sema.h"

namespace rbt::codegen {

class Lowering {
public:
  Lowering(llvm::Module &module, DebugInfo &debug_info, Resources &resources,
           const sema::SemaInfo &sema);

  // Emits one BPF function for `probe` as attached at `desc`, or at every desc of `group` (a
  // uprobe_multi group, uprobe_multi.h): then `probe` and `func` are chosen at run time by
  // the attach cookie, each desc's index in the group.
  void lower_probe(const ast::Probe &probe, const ProbeDesc &desc, unsigned index);
  void lower_probe(const ast::Probe &probe, const std::vector<ProbeDesc> &group, unsigned index);
  void set_filter_pid(bool on) { filter_pid_ = on; }
  void set_pid_from_own_namespace(bool on) { pid_from_own_namespace_ = on; }
  // Bytes of each function's stack that value slots may take (kStackBudget); past them values
  // go to scratch pages. 0 puts every value slot in scratch memory: compile() retries with it
  // when the back end finds a function's stack over 512 bytes after all (LLVM's own spills and
  // the inlined stdlib's locals come on top of the slots).
  void set_stack_budget(uint64_t bytes) { stack_budget_ = bytes; }
  // The script's name in errorf/warnf messages ("stdin" for -e).
  void set_source_name(std::string name) { source_name_ = std::move(name); }
  // The script's text: errorf/warnf inside a macro quote the line of the macro's call.
  void set_source_text(std::string text) { source_text_ = std::move(text); }
  // -k: every probe_read helper that fails sends a HelperError event (lower_actions.cpp).
  // -k: warnings where a helper's read fails or a map read finds no key (lower_actions.cpp).
  void warn_failed_reads(const std::string &source_name, const std::string &source_text);
  // The stdlib/bpf libraries the emitted code calls into.
  const std::set<std::string> &libraries() const { return libraries_; }
  // rstack and the Ruby frame builtins need the walker object (link_walker.h) linked in.
  bool uses_ruby_walker() const { return ruby_walker_ || libraries_.count("ruby_stack"); }
  // The first problem lowering ran into (a value too large for any BPF memory), or empty.
  const std::string &error() const { return error_; }

  // Builtins, declared from builtins.def (defined in lower_builtins.cpp).
#define RBT_VAR(id, name) llvm::Value *lower_##id(const ast::Builtin &node);
#define RBT_FUNC(id, name, min_args, max_args) llvm::Value *lower_##id(const ast::Call &call);
#define RBT_AGG(id, name, min_args, max_args)                                                      \
  void lower_##id(const ast::Call &call, const MapDesc &map, llvm::Value *key);
#include "sema/builtins.def"

private:
  // Statements
  void lower_block(const ast::Block &block);
  void lower_stmt(const ast::Stmt &stmt);
  void lower_assign_map(const ast::AssignMap &assign);
  void lower_assign_var(const ast::AssignVar &assign);
  void lower_var_decl(const ast::VarDecl &decl);
  void lower_if(const ast::If &stmt);
  void lower_while(const ast::While &stmt);
  void lower_for(const ast::For &stmt);
  // `for` over a map or a range: the body becomes a callback (lower_loop_callback.cpp).
  void lower_loop_callback(const ast::For &stmt, bool is_range);
  // The probe calls a helper only BTF-typed tracing programs have (socket_cookie): a
  // rawtracepoint probe then loads as tp_btf/EVENT instead of raw_tp/EVENT.
  bool tracing_program_ = false;
  bool in_callback_ = false;  // lowering a loop body: `exit()`/`return` end the iteration
  // The probe's "a loop body returned" flag (an i64 slot), shared with every callback through
  // its context: after a loop, a set flag returns from the probe (or from the enclosing loop's
  // callback), so `return` and `exit()` in a loop end the probe, as in bpftrace.
  llvm::Value *returned_ = nullptr;
  llvm::Type *callback_ret_ = nullptr;  // i32 (for_each_map_elem) or i64 (bpf_loop)
  // Lowering the values of an event (printf, print): an rstack there carries its own count of
  // frames cut below its depth (lower_rstack.cpp).
  bool in_event_ = false;
  // The id of the Ruby stack rlabel/rpath/rline read: their stack argument's, or a walk made
  // for them (lower_rstack.cpp).
  llvm::Value *rframe_stack_id(const ast::Call &call);
  int64_t rframe_index(const ast::Call &call) const;
  llvm::Value *lower_rstack_contains(const ast::Call &call);
  // The walks rlabel/rpath/rline without a stack made, per function and depth: a slot holding
  // the id, 0 until the first of them walks, so `@[rlabel(-9), rpath(-9)]` walks once.
  std::map<std::pair<llvm::Function *, uint64_t>, llvm::AllocaInst *> rframe_walks_;
  void lower_return();
  // Goes on in a new block `go_name` when `cond` (i1) holds, else returns 0 from the probe.
  void return_unless(llvm::Value *cond, const char *go_name, const char *stop_name);
  // Returns from the probe when exit() has run (exit_flag.h).

  // Expressions
  llvm::Value *lower_expr(const ast::Expr &expr);
  llvm::Value *lower_binary(const ast::Binary &bin);
  llvm::Value *lower_logical(const ast::Binary &bin);
  llvm::Value *lower_string_compare(const ast::Binary &bin);
  llvm::Value *lower_bytes_compare(const ast::Binary &bin);
  llvm::Value *lower_ternary(const ast::Ternary &te);
  llvm::Value *lower_map_read(const ast::MapRef &map);
  // The value of a count/sum/min/max/avg map's `key`, its CPUs' values combined
  // (lower_aggregation_read.cpp).
  llvm::Value *read_aggregation(const MapDesc &desc, llvm::Value *key);
  std::map<llvm::Function *, llvm::Value *> agg_read_contexts_;  // each function's one context
  llvm::Value *lower_tuple(const ast::Tuple &tuple);
  llvm::Value *lower_field_access(const ast::FieldAccess &fa);
  llvm::Value *lower_bit_field(llvm::Value *addr, const FieldLayout &field, bool user,
                               const std::string &name);
  llvm::Value *lower_cast(const ast::Cast &cast);
  llvm::Value *lower_index(const ast::Index &index);
  llvm::Value *lower_flexible_index(const ast::Index &x);
  // lower_pointers.cpp: `*p`, `&$x`, `p[i]`, `p + n`, casts to and from integer arrays.
  llvm::Value *lower_unary(const ast::Unary &u);
  llvm::Value *lower_deref(const Type &pointee, llvm::Value *address, bool user_space);
  llvm::Value *lower_pointer_index(const ast::Index &index);
  // p + n (p - n when `subtract`) moves by n elements of what p points to.
  llvm::Value *pointer_offset(const Type &pointer, llvm::Value *p, llvm::Value *n, bool subtract);
  llvm::Value *pointer_difference(const Type &pointer, llvm::Value *p, llvm::Value *q);
  llvm::Value *lower_array_cast(const ast::Cast &cast);
  llvm::Value *lower_block_expr(const ast::BlockExpr &block);
  llvm::Value *lower_call(const ast::Call &call);
  llvm::Value *lower_builtin(const ast::Builtin &node);
  // Lowers `expr` and writes it at `dst` in the layout of `slot_type` (ints widen, strings are
  // zero-padded, tuples are written element by element).
  void store_value(llvm::Value *dst, const Type &slot_type, const ast::Expr &expr);
  // Whether `expr` can be lowered by writing every byte of a `slot_type` slot itself
  // (lower_into_slot), which saves a copy and the slot's zeroing.
  bool writes_whole_slot(const Type &slot_type, const ast::Expr &expr) const;
  void lower_into_slot(llvm::Value *dst, const ast::Expr &expr);
  void store_lowered(llvm::Value *dst, const Type &slot_type, llvm::Value *value,
                     const Type &value_type);

  // Maps
  llvm::Value *map_key(const ast::MapRef &map, const MapDesc &desc);  // pointer to the key
  // Runs `update` on the value of `key` if present, else stores `init` as its first value.
  // Both callbacks receive a pointer to the value.
  void upsert(const MapDesc &map, llvm::Value *key, const std::function<void(llvm::Value *)> &update,
              const std::function<void(llvm::Value *)> &init);
  // Inserts or replaces `key`'s value in a hash map; an update the full map refuses is counted
  // (Resources::map_full_counter), never dropped silently.
  void map_update_counted(const MapDesc &map, llvm::Value *key, llvm::Value *value);
  // The i64 `load` reads from a map value `found` that may be null (the key is absent, or the
  // lookup failed), else 0: a branch around the load and a phi, since BPF's verifier refuses a
  // load through a pointer not proved non-null. `name` names the blocks (name_hit, name_done).
  llvm::Value *load_or_zero(llvm::Value *found,
                            const std::function<llvm::Value *(llvm::Value *)> &load,
                            const std::string &name);
  llvm::Value *hist_key(const MapDesc &map, llvm::Value *key, llvm::Value *bucket);
  llvm::Value *log2_bucket(llvm::Value *value, bool is_signed);
  llvm::Value *linear_bucket(llvm::Value *value, const Type &lhist);

  // Memory for a value of `size` bytes: a zeroed stack slot while the function's slots fit
  // stack_budget_ and the value is small, else a zeroed slot in the probe's per-CPU scratch pages
  // (lower_probe.cpp). Either way it is zero when the probe starts and lives until it ends.
  llvm::Value *value_slot(uint64_t size, const llvm::Twine &name = "");
  llvm::Value *scratch_slot(uint64_t size, const llvm::Twine &name);
  // {u64 index of a manifest string, u64 value}: strftime and cgroup_path (lower_bytes.cpp).
  llvm::Value *indexed_value(uint64_t index, const ast::Expr &value, const llvm::Twine &name);
  void new_scratch_page();
  // Zeroes the scratch pages the function used, once their sizes are known.
  void finish_scratch_pages();
  void place_scratch_addresses();

  // Runtime values and library calls
  llvm::Value *config_field(size_t offset);
  llvm::Value *sw_tai_ns();  // nsecs(sw_tai): CLOCK_TAI (lower_clock_ns.cpp)
  llvm::Value *tseries_now();  // the time tseries() files a value under (lower_tseries.cpp)
  llvm::Value *ns_pid_tgid();
  llvm::Value *ns_pid(bool process);  // the tgid (process) or pid (thread) of ns_pid_tgid()
  // errorf/warnf: a printf to stderr behind the call's place (lower_actions.cpp).
  llvm::Value *lower_diagnostic(const ast::Call &call, const char *severity);
  // A WARNING line on stderr naming the place `at`, sent when the code here runs.
  void runtime_warning(const SourceRange &at, const std::string &message);
  void warn_missing_key(const ast::MapRef &map, llvm::Value *found);
  // `a / b`, `a % b`: as in bpftrace, a zero divisor gives 1 and a runtime warning.
  llvm::Value *lower_division(const ast::Binary &bin, llvm::Value *l, llvm::Value *r);  // a bpf_pidns_info in rbt's pid namespace (lower_clock_ns.cpp)
  llvm::Value *call_stdlib(const char *library, const char *name, std::vector<llvm::Value *> args);

  // Stacks
  llvm::Value *lower_stack(const Type &t);
  llvm::Value *ruby_stack(const Type &t);    // rstack, rstack(N), rstack(native[, N])
  llvm::Value *walk(const char *walker, uint64_t depth);  // a call of a walker entry point
  llvm::Value *native_stack(const Type &t);  // nstack, nstack(N)
  void announce_process(llvm::Value *pid);

  // Events
  // Writes `size` bytes at `event` to the ring buffer, counting it as lost when there is no room.
  // `wakeup` false: the reader is not woken (the session drains the buffer every few ms when
  // it has a timeline); a wakeup per event would be most of a 999 Hz sample's cost.
  void send_event(llvm::Value *event, uint64_t size, bool wakeup = true);
  // send_event in an iter: probe: the event goes to the iterator's output, after its length.
  void send_iter_event(llvm::Value *event, uint64_t size);
  void emit_event(uint64_t id, const std::vector<const ast::Expr *> &args, const Type &layout,
                  bool wakeup = true);
  // Registers `action` with a payload of `args` (in their storage types) and sends its event
  // (lower_actions.cpp).
  void emit_action(ActionDesc action, const std::vector<const ast::Expr *> &args,
                   bool wakeup = true);

  const Type &type_of(const ast::Node *node) const { return sema_.type_of(node); }
  llvm::Value *ctx() { return ctx_; }
  bool samples_interrupted_context() const;  // a perf-event probe: ctx holds pt_regs
  llvm::Value *in_user_mode();               // i1: the context's registers are user space's
  llvm::Value *task_path_address(const ast::Builtin &node);
  llvm::Value *current_comm();  // comm, comm(): a slot of 16 bytes with the current task's name
  llvm::BasicBlock *new_block(const char *name);

  llvm::Module &module_;
  DebugInfo &debug_info_;
  Resources &resources_;
  const sema::SemaInfo &sema_;
  IRBuilderBPF b_;

  // Per function
  llvm::Function *fn_ = nullptr;
  llvm::Value *ctx_ = nullptr;
  const ProbeDesc *probe_ = nullptr;
  const std::vector<ProbeDesc> *group_ = nullptr;  // a uprobe_multi group, or null
  // A string constant per member of group_ (probe names, functions), chosen by the attach cookie.
  llvm::Value *per_attach_string(uint64_t size, const char *name,
                                  const std::function<std::string(const ProbeDesc &)> &text);
  using VarSlots = std::unordered_map<const sema::VarInfo *, llvm::Value *>;
  VarSlots vars_;
  // A loop body lowered as a callback reaches the variables of the functions around it through
  // its context (lower_loop_callback.cpp), each imported on its first use, so the context holds
  // only what the body uses.
  struct LoopImports {
    const VarSlots *outer;    // the enclosing function's slots when the body began
    llvm::Value *context;     // the callback's context argument
    llvm::BasicBlock *entry;  // the callback's entry block: the imported addresses load there
    std::vector<const sema::VarInfo *> vars;  // in the context's order
  };
  std::vector<LoopImports *> imports_;  // innermost loop body last
  // The slot of `var`: this function's own, or one imported from an enclosing function; null
  // when it has none yet (its first assignment makes it).
  llvm::Value *var_slot(const sema::VarInfo *var);
  struct Loop {
    llvm::BasicBlock *continue_block, *break_block;
  };
  std::vector<Loop> loops_;
  // Scratch pages of the current function: the page's address (a map lookup in the setup
  // blocks between `entry` and the body) and the bytes handed out.
  struct ScratchPage {
    llvm::Value *base;
    llvm::BasicBlock *ready;  // the block where `base` is known not to be null
    uint64_t used;
    // The slots handed out (base + offset), made in `ready`; place_scratch_addresses moves
    // each next to its uses.
    std::vector<llvm::Instruction *> addresses;
  };
  std::vector<ScratchPage> pages_;
  llvm::BasicBlock *setup_tail_ = nullptr;  // ends with the branch into the body
  std::set<std::string> libraries_;
  bool ruby_walker_ = false;
  bool filter_pid_ = false;
  bool pid_from_own_namespace_ = false;
  uint64_t stack_budget_ = kStackBudget;
  std::string source_name_ = "stdin";
  std::string source_text_;
  std::string missing_key_source_;  // -k: the script, quoted by missing-key warnings
  bool warn_missing_keys_ = false;
  const ast::Expr *lowering_ = nullptr;  // the expression lower_expr is in (for -k's warnings)
  std::string error_;
};

}  // namespace rbt::codegen
