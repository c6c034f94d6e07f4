#include "parse.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "imports.h"
#include "macros.h"
#include "parse_state.h"
#include "parser.hh"
#include "sema/builtins.h"

// Flex's reentrant API, declared here so no other file needs the generated lexer header.
extern int rbt_yylex_init_extra(rbt::ParseState *extra, yyscan_t *scanner);
extern int rbt_yylex_destroy(yyscan_t scanner);
struct yy_buffer_state;
extern yy_buffer_state *rbt_yy_scan_bytes(const char *bytes, int len, yyscan_t scanner);

namespace rbt {

namespace {

// Lexes and parses one file's text (already preprocessed) into `state`; its program, or null.
ast::Program *parse_text(const std::string &text, ParseState &state) {
  ast::Program *previous = state.ctx.root;  // an importer's program, while an import parses
  yyscan_t scanner = nullptr;
  if (rbt_yylex_init_extra(&state, &scanner) != 0) {
    state.diags.error({}, "cannot initialise the lexer");
    return nullptr;
  }
  rbt_yy_scan_bytes(text.data(), static_cast<int>(text.size()), scanner);
  parser::Parser p(scanner, state);
  int rc = p.parse();
  rbt_yylex_destroy(scanner);
  ast::Program *program = rc == 0 ? state.ctx.root : nullptr;
  state.ctx.root = previous;
  return program;
}

// What an imported file defines joins the importer's program: its probes before the
// importer's own (the import came first), its macros, map declarations and C definitions.
// `pos`: how many imported probes and C definitions are already in front (imports keep their
// order).
struct MergePos {
  size_t probes = 0, structs = 0;
};

void merge_import(ast::Program &into, ast::Program &from, ImportKind kind, MergePos &pos,
                  DiagnosticEngine &diags) {
  if (kind == ImportKind::Header && (!from.probes.empty() || !from.macros.empty() ||
                                     !from.map_decls.empty())) {
    const SourceRange &at = !from.probes.empty()  ? from.probes[0]->range
                            : !from.macros.empty() ? from.macros[0].range
                                                   : from.map_decls[0].range;
    diags.error(at, "a .h import may hold only C definitions (structs, unions, enums)");
    return;
  }
  into.probes.insert(into.probes.begin() + static_cast<long>(pos.probes), from.probes.begin(),
                     from.probes.end());
  pos.probes += from.probes.size();
  for (ast::MacroDef &m : from.macros) {
    for (const ast::MacroDef &have : into.macros)
      if (have.name == m.name && have.params.size() == m.params.size())
        diags.error(m.range, "macro '" + m.name + "' is defined twice with " +
                                 std::to_string(m.params.size()) + " parameter(s)");
    into.macros.push_back(std::move(m));
  }
  for (ast::MapDecl &d : from.map_decls) {
    for (const ast::MapDecl &have : into.map_decls)
      if (have.name == d.name)
        diags.error(d.range, "map " + d.name + " is declared twice");
    into.map_decls.push_back(std::move(d));
  }
  into.structs.insert(into.structs.begin() + static_cast<long>(pos.structs), from.structs.begin(),
                      from.structs.end());
  pos.structs += from.structs.size();
}

// Parses `source` (the script, or an imported file: `file` set) and, depth first, what it
// imports; every file once (`seen`: canonical paths).
ast::Program *parse_file(const SourceFile &source, const SourceFile *file, ast::ASTContext &ctx,
                         DiagnosticEngine &diags, const HeaderMacros &header_macros,
                         std::vector<std::string> &seen) {
  // Diagnostics quote the file as written; the lexer reads it preprocessed (same lines).
  std::string text = source.text();
  if (needs_preprocessing(text) || !header_macros.values.empty()) {  // or --include's macros
    text = preprocess(text, diags, header_macros);
    if (diags.has_errors())
      return nullptr;
  }
  ParseState state(source, ctx, diags);
  state.file = file;
  ast::Program *program = parse_text(text, state);
  if (!program || diags.has_errors())
    return nullptr;
  std::string base = import_base_dir(source);
  MergePos pos;
  for (const auto &[at, path] : state.imports)
    for (const ImportFile &f : import_files(at, path, base, diags)) {
      if (std::find(seen.begin(), seen.end(), f.path) != seen.end())
        continue;
      seen.push_back(f.path);
      std::string imported_text;
      if (!read_import(at, f.path, imported_text, diags))
        continue;
      const SourceFile &imported = ctx.keep_file(SourceFile(f.name, std::move(imported_text)));
      if (ast::Program *from = parse_file(imported, &imported, ctx, diags, {}, seen))
        merge_import(*program, *from, f.kind, pos, diags);
    }
  return diags.has_errors() ? nullptr : program;
}

}  // namespace

ast::Program *parse(const SourceFile &source, ast::ASTContext &ctx, DiagnosticEngine &diags,
                    const HeaderMacros &header_macros) {
  std::vector<std::string> seen;
  if (std::string self = script_path(source); !self.empty())
    seen.push_back(self);
  ast::Program *program = parse_file(source, nullptr, ctx, diags, header_macros, seen);
  if (!program)
    return nullptr;
  ctx.root = program;
  expand_macros(*program, ctx, diags);
  if (diags.has_errors())
    return nullptr;
  return program;
}

void ParseState::add_map_decl(const SourceRange &range, const std::string &text) {
  // The lexer matched `let @name = type(N);` as a whole.
  auto skip_ws = [&](size_t i) { return text.find_first_not_of(" \t\r\n", i); };
  size_t at = text.find('@'), eq = text.find('=', at);
  std::string name = text.substr(at, text.find_first_of(" \t\r\n=", at) - at);
  size_t type_start = skip_ws(eq + 1), paren = text.find('(', type_start);
  std::string type = text.substr(type_start, paren - type_start);
  type = type.substr(0, type.find_first_of(" \t\r\n"));
  std::string digits;
  for (size_t i = paren + 1; i < text.size() && text[i] != ')'; i++)
    if (isdigit(static_cast<unsigned char>(text[i])))
      digits += text[i];
  errno = 0;
  unsigned long long n = strtoull(digits.c_str(), nullptr, 10);
  if (errno == ERANGE || n == 0 || n > UINT32_MAX) {
    diags.error(range, "a map's max entries must be from 1 to 4294967295");
    return;
  }
  for (const ast::MapDecl &d : map_decls)
    if (d.name == name) {
      diags.error(range, "map " + name + " is declared twice");
      return;
    }
  body_seen = true;
  map_decls.push_back(ast::MapDecl{range, name, type, n});
}

void ParseState::add_macro(const SourceRange &range, std::string name,
                           std::vector<std::string> params, ast::Block *body) {
  ast::BlockExpr *b = block_expr(body);
  for (const ast::MacroDef &m : macros)
    if (m.name == name && m.params.size() == params.size())
      diags.error(range, "macro '" + name + "' is defined twice with " +
                             std::to_string(params.size()) + " parameter(s)");
  body_seen = true;
  macros.push_back(ast::MacroDef{range, std::move(name), std::move(params), b->stmts, b->value});
}

void ParseState::add_import(const SourceRange &range, std::string path) {
  if (body_seen)
    diags.error(range, "an import must come before the probes, macros and map declarations");
  imports.emplace_back(range, std::move(path));
}

void ParseState::add_config(const SourceRange &range, std::vector<ast::ConfigItem> items) {
  if (file)
    diags.error(range, "an imported file may not have a config block (the importing script's "
                       "config applies)");
  else if (config)
    diags.error(range, "a second 'config = { ... }' block: give every key in one");
  else
    config = std::move(items);
}

void ParseState::finish(ast::Program &program) {
  if (config)
    program.config = std::move(*config);
  program.map_decls = std::move(map_decls);
  program.macros = std::move(macros);
  program.structs = std::move(c_defs);
  ctx.root = &program;
}

ast::BlockExpr *ParseState::block_expr(ast::Block *block) {
  std::vector<ast::Stmt *> stmts = block->stmts;
  ast::Expr *value = nullptr;
  if (!stmts.empty()) {
    if (auto *e = ast::dyn_cast<ast::ExprStmt>(stmts.back()); e && e->unterminated) {
      value = e->expr;
      stmts.pop_back();
    } else if (auto *i = ast::dyn_cast<ast::If>(stmts.back()); i && in_if_value_) {
      if ((value = if_value(i)))  // a branch of an if used as a value ends in an if itself
        stmts.pop_back();
    }
  }
  return make<ast::BlockExpr>(block->range, std::move(stmts), value);
}

ast::Expr *ParseState::if_value(ast::If *s) {
  if (!s->else_stmt)
    return nullptr;
  bool outer = in_if_value_;
  in_if_value_ = true;
  struct Restore {
    bool &flag, value;
    ~Restore() { flag = value; }
  } restore{in_if_value_, outer};
  ast::BlockExpr *then_value = block_expr(s->then_block);
  ast::Expr *else_value = nullptr;
  if (auto *b = ast::dyn_cast<ast::Block>(s->else_stmt)) {
    ast::BlockExpr *e = block_expr(b);
    else_value = e->value ? e : nullptr;
  } else if (auto *i = ast::dyn_cast<ast::If>(s->else_stmt)) {
    else_value = if_value(i);
  }
  if (!then_value->value || !else_value)
    return nullptr;
  return make<ast::Ternary>(s->range, s->cond, then_value, else_value);
}

ast::Expr *ParseState::if_expr(ast::Stmt *stmt) {
  ast::Expr *value = if_value(static_cast<ast::If *>(stmt));
  if (!value) {
    diags.error(stmt->range, "an if used as a value needs an else, and each branch a value");
    return make<ast::IntLit>(stmt->range, 0);
  }
  return value;
}

ast::Expr *ParseState::increment(const SourceRange &range, ast::Expr *target, ast::BinaryOp op,
                                 bool prefix) {
  // Each use of the target is a node of its own: every node keeps a single parent.
  auto copy = [&]() -> ast::Expr * {
    if (auto *v = ast::dyn_cast<ast::Var>(target))
      return make<ast::Var>(v->range, v->name);
    auto *m = static_cast<ast::MapRef *>(target);
    return make<ast::MapRef>(m->range, m->name, m->keys);
  };
  ast::Expr *next = make<ast::Binary>(range, op, copy(), make<ast::IntLit>(range, 1));
  ast::Stmt *assign;
  if (auto *v = ast::dyn_cast<ast::Var>(target))
    assign = make<ast::AssignVar>(range, v, next);
  else
    assign = make<ast::AssignMap>(range, static_cast<ast::MapRef *>(target), next);
  ast::BinaryOp undo = op == ast::BinaryOp::Add ? ast::BinaryOp::Sub : ast::BinaryOp::Add;
  ast::Expr *value = prefix ? copy() : make<ast::Binary>(range, undo, copy(), make<ast::IntLit>(range, 1));
  ast::Expr *block = make<ast::BlockExpr>(range, std::vector<ast::Stmt *>{assign}, value);
  increments_[block] = assign;
  return block;
}

ast::Stmt *ParseState::statement_of(const SourceRange &range, ast::Expr *expr) {
  if (auto it = increments_.find(expr); it != increments_.end())
    return it->second;
  return make<ast::ExprStmt>(range, expr);
}

ast::Expr *ParseState::record(const SourceRange &range,
                               std::vector<std::pair<std::string, ast::Expr *>> fields) {
  std::vector<ast::Expr *> elems;
  std::vector<std::string> names;
  for (auto &[name, value] : fields) {
    if (std::find(names.begin(), names.end(), name) != names.end())
      diags.error(value->range, "the record has two fields named '" + name + "'");
    names.push_back(name);
    elems.push_back(value);
  }
  return make<ast::Tuple>(range, std::move(elems), std::move(names));
}

// `a.b.c` written as an expression: the path "a.b.c" (none for anything else).
static std::optional<std::string> field_path_of(const ast::Expr *e) {
  if (auto *b = ast::dyn_cast<ast::Builtin>(e))
    return b->name;
  if (auto *f = ast::dyn_cast<ast::FieldAccess>(e); f && !f->arrow)
    if (auto base = field_path_of(f->base))
      return *base + "." + f->field;
  return std::nullopt;
}

ast::Expr *ParseState::call(const SourceRange &range, const std::string &name,
                             std::vector<ast::Expr *> args) {
  static const std::map<std::string, std::pair<const char *, const char *>> kTaskFields = {
      {"ppid", {"real_parent", "pid"}},
      {"pcomm", {"real_parent", "comm"}},
      {"leader_comm", {"group_leader", "comm"}},
      {"leader_tid", {"group_leader", "pid"}},
  };
  if (auto it = kTaskFields.find(name); it != kTaskFields.end() && args.size() == 1) {
    ast::Expr *pointer = make<ast::FieldAccess>(range, args[0], it->second.first, false);
    return make<ast::FieldAccess>(range, pointer, it->second.second, false);
  }
  // container_of(p, typeof(struct T), a.b): the field path is written as an expression.
  if (auto *te = args.size() == 3 ? ast::dyn_cast<ast::TypeExpr>(args[1]) : nullptr;
      te && name == "container_of" && te->type.is_struct && !te->type.is_pointer && !te->type.of)
    if (auto path = field_path_of(args[2]))
      return container_of(range, range, name, {args[0]}, te->type.name, *path);
  return make<ast::Call>(range, name, std::move(args));
}

ast::Expr *ParseState::container_of(const SourceRange &range, const SourceRange &name_range,
                                     const std::string &name, std::vector<ast::Expr *> args,
                                     const std::string &type, const std::string &field) {
  if (name != "container_of" || args.size() != 1)
    diags.error(name_range, "only container_of(pointer, typeof(struct T), field) takes a type");
  ast::Expr *bytes = make<ast::Cast>(range, "uint8", false, 1u, args[0]);
  ast::Expr *offset = make<ast::TypeQuery>(range, nullptr, type, true, field);
  ast::Expr *start = make<ast::Binary>(range, ast::BinaryOp::Sub, bytes, offset);
  return make<ast::Cast>(range, type, true, 1u, start);
}

ast::Expr *ParseState::call_without_args(const SourceRange &range, const std::string &name) {
  if (!sema::find_builtin_call(name) && sema::find_builtin_var(name))
    return make<ast::Builtin>(range, name);
  return make<ast::Call>(range, name, std::vector<ast::Expr *>{});
}

ast::Expr *ParseState::elvis(const SourceRange &range, ast::Expr *value, ast::Expr *otherwise) {
  std::string name = "$__elvis" + std::to_string(++elvis_count_);
  ast::Stmt *keep = make<ast::AssignVar>(value->range, make<ast::Var>(value->range, name), value);
  ast::Expr *choice = make<ast::Ternary>(range, make<ast::Var>(value->range, name),
                                         make<ast::Var>(value->range, name), otherwise);
  return make<ast::BlockExpr>(range, std::vector<ast::Stmt *>{keep}, choice);
}

ast::Expr *ParseState::enum_cast(const SourceRange &range, const SourceRange &keyword_range,
                                 const std::string &keyword, const std::string &name,
                                 ast::Expr *operand) {
  if (keyword != "enum")
    diags.error(keyword_range, "unknown type '" + keyword + " " + name + "' in a cast");
  return make<ast::Cast>(range, "enum " + name, false, false, operand);
}

ast::Expr *ParseState::union_cast(const SourceRange &range, const SourceRange &keyword_range,
                                  const std::string &keyword, const std::string &name,
                                  ast::Expr *operand) {
  if (keyword != "union")
    diags.error(keyword_range, "unknown type '" + keyword + " " + name + " *' in a cast");
  return make<ast::Cast>(range, name, true, true, operand);
}

ast::Expr *ParseState::union_size(const SourceRange &range, const SourceRange &keyword_range,
                                  const std::string &keyword, const std::string &name) {
  if (keyword != "union")
    diags.error(keyword_range, "unknown type '" + keyword + " " + name + "' in sizeof");
  return make<ast::TypeQuery>(range, nullptr, name, true, "");
}

ast::TypeExpr *ParseState::param_pointer_type(const SourceRange &range,
                                              const std::pair<std::string, unsigned> &param) {
  ast::Expr *of = make<ast::Builtin>(range, param.first);
  ast::TypeExpr *type = nullptr;
  for (unsigned i = 0; i < param.second; i++)
    of = type = make<ast::TypeExpr>(range, ast::TypeSpec{range, "", false, true, 0, of});
  return type;
}

ast::Stmt *ParseState::return_value(const SourceRange &range, ast::Expr *value) {
  std::vector<ast::Stmt *> stmts{statement_of(value->range, value),
                                 make<ast::Jump>(range, ast::JumpKind::Return)};
  return make<ast::Block>(range, std::move(stmts));
}

void ParseState::check_discard(const SourceRange &range, const std::string &name) {
  if (name != "_")
    diags.error(range, "cannot assign to '" + name + "': only variables ($x), maps (@x) and _ "
                                                     "(discard) can be assigned");
}

std::string decode_string_literal(ParseState &state, const char *text, size_t len) {
  std::string out;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c != '\\' || i + 1 == len) {
      out += c;
      continue;
    }
    char e = text[++i];
    switch (e) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case '\\': out += '\\'; break;
    case '"': out += '"'; break;
    case 'x': {
      unsigned v = 0, n = 0;
      while (n < 2 && i + 1 < len && isxdigit(static_cast<unsigned char>(text[i + 1]))) {
        v = v * 16 + std::stoi(std::string(1, text[++i]), nullptr, 16);
        n++;
      }
      if (n == 0)
        state.diags.error(state.token, "invalid escape sequence '\\x' (expected hex digits)");
      out += static_cast<char>(v);
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        unsigned v = e - '0', n = 1;
        while (n < 3 && i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '7') {
          v = v * 8 + (text[++i] - '0');
          n++;
        }
        out += static_cast<char>(v);
      } else {
        state.diags.error(state.token, std::string("invalid escape sequence '\\") + e + "'");
      }
    }
  }
  return out;
}

Result<uint64_t> int_literal_value(const std::string &text) {
  std::string digits;
  for (char c : text)
    if (c != '_')
      digits += c;
  int base = 10;
  size_t start = 0;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    start = 2;
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    start = 1;
  }
  // Scientific notation for integers: 1e3, 5e6. Duration suffixes give nanoseconds (10ms is
  // 10000000, to compare with nsecs and elapsed); C's size suffixes (1UL) change nothing.
  uint64_t scale = 1;
  if (base == 10) {
    static const std::pair<const char *, uint64_t> kUnits[] = {
        {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ULL}, {"m", 60000000000ULL},
        {"h", 3600000000000ULL}, {"d", 86400000000000ULL}};
    for (auto [unit, ns] : kUnits) {
      size_t n = strlen(unit);
      if (digits.size() > n && digits.ends_with(unit) && isdigit(static_cast<unsigned char>(digits[digits.size() - n - 1]))) {
        digits.resize(digits.size() - n);
        scale = ns;
        break;
      }
    }
  }
  while (scale == 1 && !digits.empty() && (digits.back() == 'u' || digits.back() == 'U' ||
                                            digits.back() == 'l' || digits.back() == 'L') &&
         base != 16)
    digits.pop_back();
  if (base == 10 && scale == 1) {
    size_t e = digits.find_first_of("eE");
    if (e != std::string::npos && e + 1 < digits.size()) {
      std::string exp = digits.substr(e + 1);
      if (exp.find_first_not_of("0123456789") == std::string::npos && exp.size() <= 2) {
        for (int i = std::stoi(exp); i > 0; i--) {
          if (scale > UINT64_MAX / 10)  // 1e20 and up used to wrap (1e64 was 0)
            return make_error("", "integer literal '" + text + "' does not fit in 64 bits", "",
                              ERANGE);
          scale *= 10;
        }
        digits = digits.substr(0, e);
      }
    }
  }
  errno = 0;
  char *end = nullptr;
  const char *begin = digits.c_str() + start;
  unsigned long long v = strtoull(begin, &end, base);
  if (*begin == '\0' || *end != '\0')
    return make_error("", "invalid integer literal '" + text + "'", "", EINVAL);
  if (errno == ERANGE || (scale > 1 && v > UINT64_MAX / scale))
    return make_error("", "integer literal '" + text + "' does not fit in 64 bits", "", ERANGE);
  return static_cast<uint64_t>(v * scale);
}

std::optional<NumericArgument> numeric_argument(const std::string &text) {
  bool negative = text.size() > 1 && text[0] == '-';
  std::string digits = text.substr(negative ? 1 : 0);
  bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  if (digits.empty() ||
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789", hex ? 2 : 0) !=
          std::string::npos)
    return std::nullopt;
  auto v = int_literal_value(digits);
  if (!v || (negative && *v > uint64_t(INT64_MAX) + 1))
    return std::nullopt;
  return NumericArgument{negative ? 0 - *v : *v, negative};
}

std::optional<uint64_t> parse_int_literal(ParseState &state, const std::string &text) {
  auto v = int_literal_value(text);
  if (!v) {
    state.diags.error(state.token, v.error().why);
    return std::nullopt;
  }
  return *v;
}

}  // namespace rbt
