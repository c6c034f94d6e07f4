// Structs held by value, as bpftrace holds them:
//
//   $s = *(struct Foo *)arg0;   @s = *p;   @m[*p, 1] = 0;   @t = (1, *p);   print(*p);
//
// `*p` of a struct pointer is the struct's address (its fields are read one by one); where it
// is stored, its bytes are copied into a Struct value, whose fields (`$s.m`) are then read
// from the copy and which prints as `{ .m = 2, .n = 3 }`.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

namespace {
// Structs nest by value only as deep as their definitions do; this bounds a malformed chain.
constexpr int kMaxStructDepth = 16;
}  // namespace

Type TypeChecker::held_value(const Expr &e, const Type &t) {
  if (!t.is_record())
    return t;
  if (!t.remote) {
    diags_.error(e.range, "a struct cannot be stored in a map or a variable; store its fields "
                          "or a pointer to it");
    return Type::none();
  }
  return struct_value_of(t, e, 0);
}

Type TypeChecker::struct_value_of(const Type &record, const Expr &at, int depth) {
  const RecordLayout *layout = record_layout(record);
  if (!layout || depth > kMaxStructDepth) {
    diags_.error(at.range, "the layout of " + record.name() + " is unknown, so it cannot be copied");
    return Type::none();
  }
  std::vector<Type> fields;
  std::vector<uint32_t> offsets;
  std::vector<std::string> names;
  for (const FieldLayout &f : layout->fields) {
    Type ft = f.bit_size                            ? Type::none()
              : f.kind == FieldLayout::Kind::Float ? Type::floating(f.size)
                                                    : field_type(f, true, record.user_space);
    if (ft.is_record()) {
      ft = struct_value_of(ft, at, depth + 1);  // reports what it could not copy
      if (ft.is_none())
        return ft;
    }
    if (ft.is_none()) {
      diags_.error(at.range, record.name() + " cannot be copied: its field '" + f.name +
                                 "' has a type rbt cannot hold yet (" +
                                 (f.bit_size ? "a bit field" : f.type_name) + ")");
      return Type::none();
    }
    fields.push_back(std::move(ft));
    offsets.push_back(f.offset);
    names.push_back(f.name);
  }
  return Type::struct_value(record.record, layout->size, std::move(fields), std::move(offsets),
                            std::move(names));
}

// `struct W w[10]` reached through a pointer: an array of W values, copied whole where it is
// read (`$c.w[2].a`, `$w = $c.w`). None when the element is no struct or its layout unknown.
Type TypeChecker::struct_array(const FieldAccess &fa, const FieldLayout &field, bool user_space) {
  const FieldLayout *e = field.element.get();
  if (field.kind != FieldLayout::Kind::Array || !e || e->kind != FieldLayout::Kind::Record ||
      !field.count || e->size * field.count != field.size)
    return Type::none();
  Type elem = struct_value_of(Type::record_of(e->type_name, e->size, true, user_space), fa, 0);
  return elem.is_none() ? elem : Type::array(std::move(elem), field.count);
}

Type TypeChecker::struct_field(const FieldAccess &fa, const Type &value) {
  for (size_t i = 0; i < value.field_names.size(); i++)
    if (value.field_names[i] == fa.field) {
      if (value.elems[i].kind == TypeKind::Float) {
        float_field_error(fa, value.elems[i].name());
        return Type::none();
      }
      return value.elems[i];
    }
  diags_.error(fa.range, value.name() + " has no field '" + fa.field + "'");
  return Type::none();
}

void TypeChecker::float_field_error(const FieldAccess &fa, const std::string &type) {
  diags_.error(fa.range, "field '" + fa.field + "' is a " + type +
                             ": BPF programs have no floating point, so rbt holds it only inside "
                             "a copied struct (printed as null)");
}

}  // namespace rbt::sema
