// Values user space renders from raw bytes: buf (a length and the bytes), strftime (a format
// index and the nanoseconds), cgroup_path (a filter index and the id), ntop (a family and 16
// address bytes), pton (constant bytes).

#include <arpa/inet.h>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

llvm::Value *Lowering::lower_buf(const Call &call) {
  const Type &t = type_of(&call);
  const Type &arg = type_of(call.args[0]);
  uint32_t room = t.size - 4;
  llvm::Value *slot = value_slot(t.size, "buf");
  llvm::Value *data = b_.byte_ptr(slot, 4);
  // A length that is not a literal is clamped to the buffer's room at run time.
  llvm::Value *length = b_.getInt64(room);
  if (call.args.size() == 2 && !isa<IntLit>(call.args[1])) {
    llvm::Value *n = lower_expr(*call.args[1]);
    length = b_.CreateSelect(b_.CreateICmpULE(n, b_.getInt64(room)), n, b_.getInt64(room));
  }
  llvm::Value *src = lower_expr(*call.args[0]);
  if (arg.is_string() || arg.is_array())
    b_.copy_bytes(data, src, room);
  else if (isa<llvm::ConstantInt>(length))
    b_.probe_read(data, room, src, sema_.user_space.at(&call));
  else
    b_.probe_read(data, length, src, sema_.user_space.at(&call));
  b_.store_int(slot, length, 4);
  return slot;
}

llvm::Value *Lowering::indexed_value(uint64_t index, const Expr &value, const llvm::Twine &name) {
  llvm::Value *slot = value_slot(16, name);
  b_.CreateStore(b_.getInt64(index), slot);
  b_.CreateStore(lower_expr(value), b_.byte_ptr(slot, 8));
  return slot;
}

llvm::Value *Lowering::lower_strftime(const Call &call) {
  const std::string &format = static_cast<const StrLit &>(*call.args[0]).value;
  return indexed_value(resources_.strftime_format(format), *call.args[1], "strftime");
}

// Without a filter every hierarchy is searched, as bpftrace's default "*".
llvm::Value *Lowering::lower_cgroup_path(const Call &call) {
  std::string filter = call.args.size() == 2 ? static_cast<const StrLit &>(*call.args[1]).value : "*";
  return indexed_value(resources_.cgroup_path_filter(filter), *call.args[0], "cgroup_path");
}

llvm::Value *Lowering::lower_strerror(const Call &call) {
  llvm::Value *slot = value_slot(8, "strerror");
  b_.store_int(slot, lower_expr(*call.args[0]), 8);
  return slot;
}

llvm::Value *Lowering::lower_ntop(const Call &call) {
  const Expr &addr = *call.args.back();
  const Type &t = type_of(&addr);
  llvm::Value *slot = value_slot(24, "inet");
  llvm::Value *family = call.args.size() == 2 ? lower_expr(*call.args[0])
                        : t.is_scalar() || t.size == 4 ? b_.getInt64(AF_INET)
                                                       : b_.getInt64(AF_INET6);
  b_.CreateStore(family, slot);
  llvm::Value *v = lower_expr(addr);
  if (t.is_scalar())
    b_.store_int(b_.byte_ptr(slot, 8), v, 4);  // an IPv4 address, in memory order
  else
    b_.copy_bytes(b_.byte_ptr(slot, 8), v, t.size);
  return slot;
}

llvm::Value *Lowering::lower_macaddr(const Call &call) {
  const Type &t = type_of(call.args[0]);
  llvm::Value *slot = value_slot(8, "macaddr");
  llvm::Value *v = lower_expr(*call.args[0]);
  if (t.is_scalar())
    b_.probe_read(slot, 6, v, sema_.user_space.at(&call));
  else
    b_.copy_bytes(slot, v, 6);
  return slot;
}

llvm::Value *Lowering::lower_pton(const Call &call) {
  const std::string &text = static_cast<const StrLit &>(*call.args[0]).value;
  const Type &t = type_of(&call);
  unsigned char bytes[16] = {};
  inet_pton(t.size == 4 ? AF_INET : AF_INET6, text.c_str(), bytes);  // checked by sema
  llvm::Value *slot = value_slot(t.size, "pton");
  b_.store_bytes(slot, std::string_view(reinterpret_cast<const char *>(bytes), t.size));
  return slot;
}

}  // namespace rbt::codegen
