// Actions carried out by the runtime (print, clear, zero, time, cat, system): the BPF side
// only registers an ActionDesc and sends its event with the values the runtime needs.

#include "lowering.h"
#include "source.h"

namespace rbt::codegen {

using namespace ast;

void Lowering::emit_action(ActionDesc action, const std::vector<const Expr *> &args,
                           bool wakeup) {
  std::vector<Type> types;
  for (const Expr *a : args) {
    auto held = sema_.held_structs.find(a);  // print(*p): the struct's bytes
    types.push_back(held != sema_.held_structs.end() ? held->second
                                                     : sema::storage_type(type_of(a)));
  }
  action.args = Type::tuple(std::move(types));
  Type layout = action.args;
  uint64_t id = resources_.add_action(std::move(action));
  emit_event(id, args, layout, wakeup);
}

llvm::Value *Lowering::lower_print(const Call &call) {
  auto *map = dyn_cast<MapRef>(call.args[0]);
  if (!map || !map->keys.empty()) {
    ActionDesc action;
    action.kind = ActionKind::PrintValue;
    emit_action(std::move(action), {call.args[0]});
    return nullptr;
  }
  // print(@m[, top[, div]]): the payload is (top, div), 0 = every entry, 1 = undivided.
  ActionDesc action;
  action.kind = ActionKind::Print;
  action.map = resources_.map_index(map->name);
  action.args = Type::tuple({Type::integer(64, false), Type::integer(64, false)});
  Type layout = action.args;
  uint64_t id = resources_.add_action(std::move(action));
  llvm::Value *event = b_.stack_slot(8 + layout.size, "event");
  b_.CreateStore(b_.getInt64(id), event);
  llvm::Value *top = call.args.size() > 1 ? lower_expr(*call.args[1]) : b_.getInt64(0);
  llvm::Value *div = call.args.size() > 2 ? lower_expr(*call.args[2]) : b_.getInt64(1);
  b_.store_int(b_.byte_ptr(event, 8 + layout.offsets[0]), top, 8);
  b_.store_int(b_.byte_ptr(event, 8 + layout.offsets[1]), div, 8);
  send_event(event, 8 + layout.size);
  return nullptr;
}

namespace {
ActionDesc map_action(ActionKind kind, int map) {
  ActionDesc action;
  action.kind = kind;
  action.map = map;
  return action;
}
}  // namespace

llvm::Value *Lowering::lower_clear(const Call &call) {
  auto &map = static_cast<const MapRef &>(*call.args[0]);
  emit_action(map_action(ActionKind::Clear, resources_.map_index(map.name)), {});
  return nullptr;
}

llvm::Value *Lowering::lower_zero(const Call &call) {
  auto &map = static_cast<const MapRef &>(*call.args[0]);
  emit_action(map_action(ActionKind::Zero, resources_.map_index(map.name)), {});
  return nullptr;
}

llvm::Value *Lowering::lower_time(const Call &call) {
  ActionDesc action;
  action.kind = ActionKind::Time;
  action.text = call.args.empty() ? "%H:%M:%S\n" : static_cast<const StrLit *>(call.args[0])->value;
  emit_action(std::move(action), {});
  return nullptr;
}

llvm::Value *Lowering::lower_cat(const Call &call) {
  ActionDesc action;
  action.kind = ActionKind::Cat;
  if (auto *fmt = dyn_cast<StrLit>(call.args[0])) {
    action.text = fmt->value;
    emit_action(std::move(action), {call.args.begin() + 1, call.args.end()});
  } else {
    action.text = "%s";  // cat($path): the path is the only value
    emit_action(std::move(action), {call.args[0]});
  }
  return nullptr;
}

// bpf_probe_write_user(dst, src, len): 0 on success, so the value is whether it wrote.
llvm::Value *Lowering::lower_write_user(const Call &call) {
  llvm::Value *dst = lower_expr(*call.args[0]);
  if (dst->getType()->isIntegerTy())
    dst = b_.CreateIntToPtr(b_.CreateZExtOrTrunc(dst, b_.getInt64Ty()), b_.getPtrTy());
  llvm::Value *src = lower_expr(*call.args[1]);
  if (type_of(call.args[1]).is_int()) {  // an integer's bytes, little-endian, from the stack
    llvm::Value *slot = b_.stack_slot(8, "write_user_src");
    b_.CreateStore(b_.CreateSExtOrTrunc(src, b_.getInt64Ty()), slot);
    src = slot;
  }
  uint64_t len = sema_.constants.at(&call);  // sema's constant length
  llvm::Value *rc = b_.call_helper(BPF_FUNC_probe_write_user, b_.getInt64Ty(),
                                   {dst, src, b_.getInt64(len)});
  return b_.CreateZExt(b_.CreateICmpEQ(rc, b_.getInt64(0)), b_.getInt64Ty());
}

llvm::Value *Lowering::lower_system(const Call &call) {
  ActionDesc action;
  action.kind = ActionKind::System;
  action.text = static_cast<const StrLit *>(call.args[0])->value;
  emit_action(std::move(action), {call.args.begin() + 1, call.args.end()});
  return nullptr;
}

namespace {
// The place of a call as bpftrace prints it in errorf/warnf: `stdin:1:9-62` (line, first
// column, the column past the call), as a printf format (a `%` of a file name doubled).
std::string call_place(const std::string &source_name, const SourceRange &r) {
  std::string place;
  for (char c : r.file ? r.file->name() : source_name)  // an imported file's own name
    place += c == '%' ? "%%" : std::string(1, c);
  place += ":" + std::to_string(r.line) + ":" + std::to_string(r.col);
  if (r.end_line == r.line && r.end_col > r.col)
    place += "-" + std::to_string(r.end_col);
  return place;
}

// As bpftrace: a line `place: ERROR: expanded from` and the source line for each macro call
// that produced an errorf/warnf (a printf format, as the message is).
std::string expansion_lines(const std::string &source_name, const std::string &source_text,
                            const SourceRange &r, const char *severity) {
  std::string out;
  SourceFile script(source_name, source_text);
  for (const SourceRange *site = r.expanded_from; site; site = site->expanded_from) {
    out += "\n" + call_place(source_name, *site) + ": " + severity + ": expanded from\n";
    for (char c : (site->file ? *site->file : script).line(site->line))
      out += c == '%' ? "%%" : std::string(1, c);
  }
  return out;
}
}  // namespace

llvm::Value *Lowering::lower_diagnostic(const Call &call, const char *severity) {
  ActionDesc action;
  action.kind = ActionKind::Diagnostic;
  action.text = call_place(source_name_, call.range) + ": " + severity + ": " +
                static_cast<const StrLit *>(call.args[0])->value +
                expansion_lines(source_name_, source_text_, call.range, severity);
  emit_action(std::move(action), {call.args.begin() + 1, call.args.end()});
  return nullptr;
}
void Lowering::runtime_warning(const SourceRange &at, const std::string &message) {
  ActionDesc action;
  action.kind = ActionKind::Diagnostic;
  std::string text;
  for (char c : message)  // the text is a printf format without arguments
    text += c == '%' ? "%%" : std::string(1, c);
  action.text = call_place(source_name_, at) + ": WARNING: " + text;
  emit_action(std::move(action), {});
}

llvm::Value *Lowering::lower_errorf(const Call &call) { return lower_diagnostic(call, "ERROR"); }
llvm::Value *Lowering::lower_warnf(const Call &call) { return lower_diagnostic(call, "WARNING"); }

// join(argv[, sep]): reads kJoinArgs pointers of the array and the string behind each into
// the event (a failed read leaves zeros); user space joins them up to the first empty one.
llvm::Value *Lowering::lower_join(const Call &call) {
  ActionDesc action;
  action.kind = ActionKind::Join;
  action.text = call.args.size() == 2 ? static_cast<const StrLit *>(call.args[1])->value : " ";
  action.args = Type::tuple(std::vector<Type>(kJoinArgs, Type::string(kJoinArgSize)));
  uint64_t size = 8 + action.args.size;
  uint64_t id = resources_.add_action(std::move(action));
  bool user = sema_.user_space.at(&call);
  llvm::Value *argv = lower_expr(*call.args[0]);
  llvm::Value *event = value_slot(size, "join_event");
  llvm::Value *arg = b_.stack_slot(8, "join_arg");
  b_.CreateStore(b_.getInt64(id), event);
  for (uint32_t i = 0; i < kJoinArgs; i++) {
    b_.probe_read(arg, 8, b_.CreateAdd(argv, b_.getInt64(8 * i)), user);
    b_.probe_read_str(b_.byte_ptr(event, 8 + i * kJoinArgSize), kJoinArgSize,
                      b_.CreateLoad(b_.getInt64Ty(), arg), user);
  }
  send_event(event, size);
  return nullptr;
}

// -k: a keyed map read that finds no entry warns as bpftrace does (its words, the place, the
// helper, the source line and `~` under the map), then reads zero as always.
void Lowering::warn_missing_key(const MapRef &map, llvm::Value *found) {
  if (!warn_missing_keys_ || map.keys.empty())
    return;
  std::string message = "Can't lookup map element because it does not exist.\n"
                        "Additional Info - helper: map_lookup_elem, retcode: 0";
  const SourceRange &r = map.range;
  size_t start = 0;  // the map's line in the script
  for (uint32_t line = 1; line < static_cast<uint32_t>(r.line) && start != std::string::npos;
       line++) {
    size_t newline = missing_key_source_.find('\n', start);
    start = newline == std::string::npos ? newline : newline + 1;
  }
  if (start != std::string::npos && r.col > 0) {
    size_t end = missing_key_source_.find('\n', start);
    std::string text = missing_key_source_.substr(start, end == std::string::npos ? end : end - start);
    uint32_t width = r.end_line == r.line && r.end_col > r.col ? r.end_col - r.col : 1;
    message += "\n" + text + "\n" + std::string(r.col - 1, ' ') + std::string(width, '~');
  }
  auto *missing = new_block("key_missing");
  auto *checked = new_block("key_checked");
  b_.CreateCondBr(b_.CreateIsNull(found), missing, checked);
  b_.SetInsertPoint(missing);
  runtime_warning(r, message);
  b_.CreateBr(checked);
  b_.SetInsertPoint(checked);
}

void Lowering::warn_failed_reads(const std::string &source_name, const std::string &source_text) {
  warn_missing_keys_ = true;
  missing_key_source_ = source_text;
  b_.on_read_result = [this, source_name](const char *helper, llvm::Value *rc) {
    // The place of the expression whose read this is (lower_expr keeps track).
    std::string where = source_name;
    if (lowering_)
      where += ":" + std::to_string(lowering_->range.line) + ":" +
               std::to_string(lowering_->range.col);
    ActionDesc action;
    action.kind = ActionKind::HelperError;
    action.text = where + ": WARNING: Failed to " + helper;
    action.args = Type::tuple({Type::integer(64, true)});
    uint64_t id = resources_.add_action(std::move(action));
    auto *failed = new_block("read_failed");
    auto *done = new_block("read_done");
    b_.CreateCondBr(b_.CreateICmpSLT(rc, b_.getInt64(0)), failed, done);
    b_.SetInsertPoint(failed);
    llvm::Value *event = b_.stack_slot(16, "read_error");
    b_.CreateStore(b_.getInt64(id), event);
    b_.CreateStore(rc, b_.byte_ptr(event, 8));
    send_event(event, 16);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  };
}

}  // namespace rbt::codegen
