// Statements: blocks, assignments, control flow.

#include <cassert>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

void Lowering::lower_block(const Block &block) {
  for (const Stmt *s : block.stmts)
    lower_stmt(*s);
}

void Lowering::lower_stmt(const Stmt &stmt) {
  switch (stmt.kind) {
  case NodeKind::ExprStmt:
    lower_expr(*static_cast<const ExprStmt &>(stmt).expr);
    break;
  case NodeKind::AssignMap:
    lower_assign_map(static_cast<const AssignMap &>(stmt));
    break;
  case NodeKind::AssignVar:
    lower_assign_var(static_cast<const AssignVar &>(stmt));
    break;
  case NodeKind::VarDecl:
    lower_var_decl(static_cast<const VarDecl &>(stmt));
    break;
  case NodeKind::Block:
    lower_block(static_cast<const Block &>(stmt));
    break;
  case NodeKind::If:
    lower_if(static_cast<const If &>(stmt));
    break;
  case NodeKind::While:
    lower_while(static_cast<const While &>(stmt));
    break;
  case NodeKind::For:
    lower_for(static_cast<const For &>(stmt));
    break;
  case NodeKind::Unroll: {
    auto &u = static_cast<const Unroll &>(stmt);
    auto resolved = sema_.constants.find(&u);  // `unroll ($1)`
    uint64_t count = resolved != sema_.constants.end() ? resolved->second : u.count;
    for (uint64_t i = 0; i < count; i++)
      lower_block(*u.body);
    break;
  }
  case NodeKind::Jump: {
    auto jump = static_cast<const Jump &>(stmt).jump;
    if (jump == JumpKind::Return) {
      lower_return();
    } else {
      assert(!loops_.empty() && "sema rejects break/continue outside loops");
      b_.CreateBr(jump == JumpKind::Break ? loops_.back().break_block
                                          : loops_.back().continue_block);
      b_.SetInsertPoint(new_block("after_jump"));
    }
    break;
  }
  default:
    assert(false && "not a statement");
  }
}

void Lowering::lower_assign_map(const AssignMap &assign) {
  const MapDesc &map = resources_.map_desc(assign.map->name);
  llvm::Value *key = map_key(*assign.map, map);
  const Expr *value_expr = assign.value;
  auto *block = dyn_cast<BlockExpr>(value_expr);
  if (block && block->value && isa<Call>(block->value)) {
    // `@ = { ...; avg($a) }`: the statements, then the block's value as the map's.
    for (const Stmt *s : block->stmts)
      lower_stmt(*s);
    value_expr = block->value;
  }
  if (auto *call = dyn_cast<Call>(value_expr)) {
    auto it = sema_.builtins.find(call);
    if (it != sema_.builtins.end() && sema::builtin_info(it->second).kind ==
                                          sema::BuiltinInfo::Kind::Agg) {
      switch (it->second) {
#define RBT_AGG(id, name, min_args, max_args)                                                      \
  case sema::BuiltinId::id:                                                                        \
    lower_##id(*call, map, key);                                                                   \
    return;
#include "sema/builtins.def"
      default:
        break;
      }
    }
  }
  llvm::Value *value = value_slot(map.value.size, "map_value");
  store_value(value, map.value, *value_expr);
  map_update_counted(map, key, value);
}

void Lowering::lower_assign_var(const AssignVar &assign) {
  const sema::VarInfo *var = sema_.vars.at(assign.var);
  llvm::Value *slot = var_slot(var);
  if (!slot)
    slot = vars_[var] = value_slot(var->type.size, var->name);
  store_value(slot, var->type, *assign.value);
}

// `let $x [= v]`: the variable's slot exists from here, holding v or zero (each time the
// declaration runs, as in a loop).
void Lowering::lower_var_decl(const VarDecl &decl) {
  const sema::VarInfo *var = sema_.vars.at(decl.var);
  if (var->type.is_none() || var->type.kind == TypeKind::Void)
    return;  // never given a value nor a type: nothing reads it
  llvm::Value *slot = var_slot(var);
  if (!slot)
    slot = vars_[var] = value_slot(var->type.size, var->name);
  if (decl.value)
    store_value(slot, var->type, *decl.value);
  else
    b_.zero_bytes(slot, var->type.size);
}

void Lowering::lower_if(const If &stmt) {
  llvm::Value *cond = lower_expr(*stmt.cond);
  auto *then_block = new_block("if_then");
  auto *else_block = stmt.else_stmt ? new_block("if_else") : nullptr;
  auto *done = new_block("if_done");
  b_.CreateCondBr(b_.CreateICmpNE(cond, b_.getInt64(0)), then_block,
                  else_block ? else_block : done);
  b_.SetInsertPoint(then_block);
  lower_block(*stmt.then_block);
  b_.CreateBr(done);
  if (else_block) {
    b_.SetInsertPoint(else_block);
    lower_stmt(*stmt.else_stmt);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

void Lowering::lower_while(const While &stmt) {
  auto *cond_block = new_block("while_cond");
  auto *body = new_block("while_body");
  auto *done = new_block("while_done");
  b_.CreateBr(cond_block);
  b_.SetInsertPoint(cond_block);
  llvm::Value *cond = lower_expr(*stmt.cond);
  b_.CreateCondBr(b_.CreateICmpNE(cond, b_.getInt64(0)), body, done);
  b_.SetInsertPoint(body);
  loops_.push_back({cond_block, done});
  lower_block(*stmt.body);
  loops_.pop_back();
  b_.CreateBr(cond_block);
  b_.SetInsertPoint(done);
}

void Lowering::lower_for(const For &stmt) {
  lower_loop_callback(stmt, stmt.hi != nullptr);  // lower_loop_callback.cpp
}

}  // namespace rbt::codegen
