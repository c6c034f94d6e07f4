#include "c_struct.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace rbt::sema {

namespace {

// Bounds that keep every size and offset well inside 32 bits.
constexpr unsigned long long kMaxArray = 1 << 20;
constexpr uint64_t kMaxStruct = 1 << 24;

struct Scalar {
  uint32_t size;
  bool is_signed;
};

// The C spellings of integer types (after folding `signed`/`unsigned`/`int` words), with the
// kernel's and stdint's short names.
std::optional<Scalar> scalar_named(const std::string &name) {
  static const std::map<std::string, Scalar> kScalars = {
      {"char", {1, true}},        {"unsigned char", {1, false}}, {"bool", {1, false}},
      {"_Bool", {1, false}},      {"short", {2, true}},          {"unsigned short", {2, false}},
      {"int", {4, true}},         {"unsigned", {4, false}},      {"long", {8, true}},
      {"unsigned long", {8, false}}, {"long long", {8, true}},   {"unsigned long long", {8, false}},
      {"u8", {1, false}},         {"s8", {1, true}},             {"u16", {2, false}},
      {"s16", {2, true}},         {"u32", {4, false}},           {"s32", {4, true}},
      {"u64", {8, false}},        {"s64", {8, true}},            {"__u8", {1, false}},
      {"__s8", {1, true}},        {"__u16", {2, false}},         {"__s16", {2, true}},
      {"__u32", {4, false}},      {"__s32", {4, true}},          {"__u64", {8, false}},
      {"__s64", {8, true}},       {"int8_t", {1, true}},         {"uint8_t", {1, false}},
      {"int16_t", {2, true}},     {"uint16_t", {2, false}},      {"int32_t", {4, true}},
      {"uint32_t", {4, false}},   {"int64_t", {8, true}},        {"uint64_t", {8, false}},
      {"size_t", {8, false}},     {"ssize_t", {8, true}},        {"pid_t", {4, true}},
      {"uid_t", {4, false}},      {"gid_t", {4, false}},         {"uintptr_t", {8, false}},
  };
  auto it = kScalars.find(name);
  if (it == kScalars.end())
    return std::nullopt;
  return it->second;
}

// Removes comments and splits into identifiers, numbers and single punctuation characters.
std::vector<std::string> tokens_of(const std::string &text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;
    } else if (text.compare(i, 2, "//") == 0) {
      size_t end = text.find('\n', i);
      i = end == std::string::npos ? text.size() : end;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        j++;
      out.push_back(text.substr(i, j - i));
      i = j;
    } else {
      out.push_back(std::string(1, c));
      i++;
    }
  }
  return out;
}

bool is_identifier(const std::string &t) {
  return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_');
}

// Drops `__attribute__((...))` (anywhere: after a field, after the closing brace); says whether
// one of them asked for `packed`.
std::vector<std::string> without_attributes(const std::vector<std::string> &tokens, bool &packed) {
  std::vector<std::string> out;
  for (size_t i = 0; i < tokens.size(); i++) {
    if (tokens[i] != "__attribute__" && tokens[i] != "__attribute") {
      out.push_back(tokens[i]);
      continue;
    }
    int depth = 0;
    for (i++; i < tokens.size(); i++) {
      if (tokens[i] == "(")
        depth++;
      else if (tokens[i] == ")" && --depth == 0)
        break;
      else if (tokens[i] == "packed" || tokens[i] == "__packed__")
        packed = true;
    }
  }
  return out;
}

uint32_t round_up(uint32_t v, uint32_t to) { return to ? (v + to - 1) / to * to : v; }

// C's alignment of a field (x86-64 and BPF agree): its size for integers and pointers, the
// element's for arrays, a record's own. Members of kernel structs nested two deep are judged
// by their size, which is exact for every integer and pointer.
uint32_t align_of(const FieldLayout &f, const RecordLayout *record) {
  switch (f.kind) {
  case FieldLayout::Kind::Pointer:
    return 8;
  case FieldLayout::Kind::Int:
  case FieldLayout::Kind::Other:
    return f.size ? std::min(f.size, 8u) : 1;
  case FieldLayout::Kind::CharArray:
    return 1;
  case FieldLayout::Kind::Array:
    return f.count && f.size / f.count <= 8 ? std::max(f.size / f.count, 1u) : 8;
  case FieldLayout::Kind::Record: {
    if (record && record->align)
      return record->align;
    uint32_t a = 1;  // a kernel struct: judged by its members
    if (record)
      for (auto &inner : record->fields)
        a = std::max(a, inner.kind == FieldLayout::Kind::Record ? 8u : align_of(inner, nullptr));
    return std::min(a, 8u);
  }
  default:
    return 1;
  }
}

// The type before a field's declarators: `unsigned long`, `struct foo`, `struct { ... }`.
struct BaseType {
  FieldLayout field;                     // kind, size, signedness, type_name
  const RecordLayout *record = nullptr;  // Record: its layout
  std::shared_ptr<RecordLayout> anonymous;  // an unnamed record defined right here
  bool unknown = false;  // a type name nobody defines
  std::string spelling;  // unknown: as written
};

class DefinitionParser {
public:
  DefinitionParser(std::vector<std::string> tokens,
                   const std::function<const RecordLayout *(const std::string &)> &find,
                   const std::function<std::optional<int64_t>(const std::string &)> &constant,
                   bool packed)
      : tokens_(std::move(tokens)), find_(find), constant_(constant), packed_(packed) {}

  Result<CDefinitions> run() {
    std::string kw = next();
    if (kw != "struct" && kw != "union" && kw != "enum")
      return error("expected 'struct', 'union' or 'enum'");
    std::string name = is_identifier(peek()) ? next() : "";
    if (next() != "{")
      return error("expected '{' after " + kw + (name.empty() ? "" : " " + name));
    if (kw == "enum")
      enum_body(name);
    else if (name.empty())
      fail("a " + kw + " at the top of a script needs a name");
    else
      record_body(name, kw == "union");
    if (error_.empty() && !peek().empty())
      fail("unexpected '" + peek() + "' after the definition of " + kw + " " + name);
    if (!error_.empty())
      return error(error_);
    return std::move(out_);
  }

private:
  Result<CDefinitions> error(const std::string &why) {
    return make_error("C definition", why);
  }
  void fail(const std::string &why) {
    if (error_.empty())
      error_ = why;
  }
  std::string next() { return i_ < tokens_.size() ? tokens_[i_++] : ""; }
  std::string peek(size_t ahead = 0) const {
    return i_ + ahead < tokens_.size() ? tokens_[i_ + ahead] : "";
  }
  const RecordLayout *find(const std::string &name) const {
    for (auto &r : out_.records)
      if (r->name == name)
        return r.get();
    return find_(name);
  }

  // `{ A, B = 5, C = B + 1, }` after `enum NAME`: enumerators count up from the last value.
  void enum_body(const std::string &name) {
    CEnum e{name, {}};
    int64_t value = 0;
    while (error_.empty() && peek() != "}") {
      std::string id = next();
      if (!is_identifier(id))
        return fail("expected an enumerator name in enum " + name + ", not '" + id + "'");
      if (peek() == "=") {
        next();
        value = expression(e);
      }
      e.values.emplace_back(id, value++);
      if (peek() == ",")
        next();
      else if (peek() != "}")
        return fail("expected ',' or '}' after enumerator " + id);
    }
    next();  // '}'
    out_.enums.push_back(std::move(e));
  }

  // An enumerator's value: integers, enumerators, ( ), unary - ~, and + - * / % << >> & | ^.
  int64_t expression(const CEnum &e, int min_prec = 0) {
    int64_t lhs = operand(e);
    for (;;) {
      std::string op = peek();
      if ((op == "<" || op == ">") && peek(1) == op)
        op += op;
      static const std::map<std::string, int> kPrec = {
          {"|", 1}, {"^", 2}, {"&", 3}, {"<<", 4}, {">>", 4}, {"+", 5}, {"-", 5},
          {"*", 6}, {"/", 6}, {"%", 6}};
      auto it = kPrec.find(op);
      if (it == kPrec.end() || it->second < min_prec || !error_.empty())
        return lhs;
      i_ += op.size() == 2 && (op == "<<" || op == ">>") ? 2 : 1;
      int64_t rhs = expression(e, it->second + 1);
      uint64_t l = static_cast<uint64_t>(lhs), r = static_cast<uint64_t>(rhs);
      if ((op == "/" || op == "%") && rhs == 0) {
        fail("division by zero in an enumerator's value");
        return 0;
      }
      if (op == "|") lhs = static_cast<int64_t>(l | r);
      else if (op == "^") lhs = static_cast<int64_t>(l ^ r);
      else if (op == "&") lhs = static_cast<int64_t>(l & r);
      else if (op == "<<") lhs = static_cast<int64_t>(r < 64 ? l << r : 0);
      else if (op == ">>") lhs = r < 64 ? lhs >> r : 0;
      else if (op == "+") lhs = static_cast<int64_t>(l + r);
      else if (op == "-") lhs = static_cast<int64_t>(l - r);
      else if (op == "*") lhs = static_cast<int64_t>(l * r);
      else if (op == "/") lhs = lhs / rhs;
      else lhs = lhs % rhs;
    }
  }

  int64_t operand(const CEnum &e) {
    std::string t = next();
    if (t == "-")
      return static_cast<int64_t>(0 - static_cast<uint64_t>(operand(e)));
    if (t == "~")
      return ~operand(e);
    if (t == "(") {
      int64_t v = expression(e);
      if (next() != ")")
        fail("expected ')' in an enumerator's value");
      return v;
    }
    if (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0]))) {
      std::string digits = t;
      while (!digits.empty() && std::strchr("uUlL", digits.back()))
        digits.pop_back();
      errno = 0;
      char *end = nullptr;
      unsigned long long v = std::strtoull(digits.c_str(), &end, 0);
      if (errno == ERANGE || *end != '\0')
        fail("invalid integer '" + t + "' in an enumerator's value");
      return static_cast<int64_t>(v);
    }
    if (is_identifier(t)) {
      for (auto &[n, v] : e.values)
        if (n == t)
          return v;
      for (auto &other : out_.enums)
        for (auto &[n, v] : other.values)
          if (n == t)
            return v;
      if (auto v = constant_(t))
        return *v;
      fail("unknown name '" + t + "' in an enumerator's value");
      return 0;
    }
    fail("expected a value for an enumerator, not '" + t + "'");
    return 0;
  }

  // The type words of a field, up to its first declarator.
  BaseType base_type(const std::string &record_name) {
    BaseType b;
    std::string kw = peek();
    if (kw == "struct" || kw == "union" || kw == "enum") {
      next();
      std::string name = is_identifier(peek()) ? next() : "";
      if (peek() == "{") {  // a definition inside a definition
        next();
        if (kw == "enum") {
          enum_body(name);
          b.field.kind = FieldLayout::Kind::Int;
          b.field.size = 4;
          b.field.type_name = "enum " + name;
          return b;
        }
        auto inner = record_body(name, kw == "union");
        if (!inner)
          return b;
        if (name.empty())
          b.anonymous = inner;
        b.record = inner.get();
      } else if (kw == "enum") {
        b.field.kind = FieldLayout::Kind::Int;
        b.field.size = 4;
        b.field.type_name = "enum " + name;
        return b;
      } else {
        b.record = find(name);
        if (!b.record && name == record_name) {
          b.field.type_name = name;  // only a pointer to it can be a field
          b.field.kind = FieldLayout::Kind::Record;
          return b;
        }
        if (!b.record) {  // only a pointer to it can be a field
          b.unknown = true;
          b.spelling = kw + " " + name;
          b.field.type_name = name;
          return b;
        }
      }
      b.field.kind = FieldLayout::Kind::Record;
      b.field.type_name = b.record->name;
      b.field.size = b.record->size;
      return b;
    }
    // Words: `unsigned long long`, `u64`, `const char`; the last one is the field's name,
    // unless '*' follows (`char *p`) or an unnamed bit field's ':' (`unsigned int :3`).
    std::vector<std::string> words;
    while (is_identifier(peek())) {
      std::string w = next();
      if (w != "const" && w != "volatile" && w != "signed" && w != "restrict")
        words.push_back(w);
    }
    bool unnamed_bits = peek() == ":" && !words.empty() && scalar_named(normalized(words));
    if (peek() != "*" && !unnamed_bits && !words.empty()) {
      words.pop_back();
      i_--;
    }
    if (words.empty())
      words.push_back("int");  // `signed x`
    std::string type = normalized(words);
    b.field.type_name = type;
    if (auto s = scalar_named(type)) {
      b.field.kind = FieldLayout::Kind::Int;
      b.field.size = s->size;
      b.field.is_signed = s->is_signed;
    } else if (type == "float" || type == "double" || type == "long double") {
      b.field.kind = FieldLayout::Kind::Float;  // laid out, held only inside a struct
      b.field.size = type == "float" ? 4 : type == "double" ? 8 : 16;
    } else if (type == "void") {
      b.field.kind = FieldLayout::Kind::Other;
    } else if (const RecordLayout *r = find(type)) {
      b.record = r;
      b.field.kind = FieldLayout::Kind::Record;
      b.field.type_name = r->name;
      b.field.size = r->size;
    } else {
      b.unknown = true;
      b.spelling = type;
    }
    return b;
  }

  // `unsigned int` is `unsigned`, `long int` is `long`, `short int` is `short`.
  static std::string normalized(const std::vector<std::string> &words) {
    std::string s;
    for (auto &w : words)
      s += (s.empty() ? "" : " ") + w;
    if (words.size() > 1 && s.ends_with(" int"))
      s.resize(s.size() - 4);
    return s;
  }

  // `{ fields }` after `struct NAME` (or `union`): the record, registered under its name (an
  // anonymous one by the caller, once its field is known).
  std::shared_ptr<RecordLayout> record_body(const std::string &name, bool is_union) {
    auto layout = std::make_shared<RecordLayout>();
    layout->name = name;
    uint32_t bit_pos = 0, size = 0, max_align = 1;
    std::vector<std::shared_ptr<FieldLayout>> self_pointers;
    while (error_.empty() && peek() != "}") {
      if (peek().empty())
        return fail("missing '}' at the end of " + describe(name, is_union)), nullptr;
      if (peek() == ";") {
        next();
        continue;
      }
      BaseType base = base_type(name);
      if (!error_.empty())
        return nullptr;
      // `struct { int a; } ;` inside a record: its members are the record's own (C11).
      if (base.anonymous && (peek() == ";" || peek() == "}")) {
        uint32_t align = packed_ ? 1 : std::max(base.anonymous->align, 1u);
        uint32_t offset = is_union ? 0 : round_up((bit_pos + 7) / 8, align);
        for (FieldLayout f : base.anonymous->fields) {
          f.offset += offset;
          layout->fields.push_back(std::move(f));
        }
        size = std::max(size, offset + base.anonymous->size);
        if (!is_union)
          bit_pos = (offset + base.anonymous->size) * 8;
        max_align = std::max(max_align, align);
        if (peek() == ";")
          next();
        continue;
      }
      for (;;) {  // declarators: `a:4, b:8`, `*p, q[2]`
        int pointers = 0;
        while (peek() == "*" || peek() == "const" || peek() == "volatile")
          pointers += next() == "*";
        std::string field_name = is_identifier(peek()) ? next() : "";
        uint64_t count = 1;
        std::vector<uint32_t> dims;  // `int y[2][3]`: {2, 3}
        while (peek() == "[") {
          next();
          std::string n = next();
          if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) || next() != "]")
            return fail("an array in " + describe(name, is_union) + " needs a constant size"),
                   nullptr;
          errno = 0;
          unsigned long long v = std::strtoull(n.c_str(), nullptr, 0);
          if (errno == ERANGE || v > kMaxArray || count * v > kMaxArray)
            return fail("an array in " + describe(name, is_union) + " must have at most " +
                        std::to_string(kMaxArray) + " elements"),
                   nullptr;
          count *= v;  // `int y[2][2]` is laid out as 4 ints
          dims.push_back(static_cast<uint32_t>(v));
        }
        int64_t bits = -1;
        if (peek() == ":") {
          next();
          std::string n = next();
          char *end = nullptr;
          bits = std::strtoll(n.c_str(), &end, 0);
          if (n.empty() || *end != '\0' || bits < 0 || bits > 64)
            return fail("expected a bit-field width after ':' in " + describe(name, is_union)),
                   nullptr;
        }
        if (field_name.empty() && bits < 0)
          return fail("a field of " + describe(name, is_union) + " needs a name (got '" +
                      peek() + "')"),
                 nullptr;
        FieldLayout f = base.field;
        f.name = field_name;
        const RecordLayout *record = base.record;
        if (pointers) {
          auto pointee = std::make_shared<FieldLayout>(base.field);
          if (pointers > 1 || base.unknown)
            pointee->kind = FieldLayout::Kind::Other;
          else if (base.field.kind == FieldLayout::Kind::Record && !base.record)
            self_pointers.push_back(pointee);  // a list's `struct node *next`: size below
          f = FieldLayout{};
          f.name = field_name;
          f.kind = FieldLayout::Kind::Pointer;
          f.size = 8;
          f.type_name = base.field.type_name;
          f.pointee = pointee;
          record = nullptr;
        } else if (base.unknown) {
          return fail("unknown type '" + base.spelling + "' of field '" + field_name +
                      "' in " + describe(name, is_union)),
                 nullptr;
        } else if (base.field.kind == FieldLayout::Kind::Record && !base.record) {
          return fail("field '" + field_name + "' of " + describe(name, is_union) +
                      " cannot be of its own type (a pointer can)"),
                 nullptr;
        } else if (base.field.kind == FieldLayout::Kind::Other && base.field.size == 0) {
          return fail("field '" + field_name + "' of " + describe(name, is_union) +
                      " has no size (void)"),
                 nullptr;
        }
        if (base.anonymous && !pointers && !field_name.empty()) {
          base.anonymous->name = name + "." + field_name;
          f.type_name = base.anonymous->name;
          if (!find(base.anonymous->name))
            out_.records.push_back(base.anonymous);
        }
        uint32_t align = packed_ ? 1 : align_of(f, record);
        // An array of arrays is built from the innermost dimension out: `int y[2][3]` is 2
        // arrays of 3 ints (each level's element kept for indexing), and only the innermost
        // array of chars is a string.
        for (size_t d = dims.size(); d-- > 0;) {
          auto element = std::make_shared<FieldLayout>(f);
          element->name.clear();
          if (f.kind == FieldLayout::Kind::Int) {
            f.kind = f.size == 1 && d + 1 == dims.size() ? FieldLayout::Kind::CharArray
                                                         : FieldLayout::Kind::Array;
          } else {
            if (f.kind != FieldLayout::Kind::Array && f.kind != FieldLayout::Kind::CharArray)
              f.type_name = pointers ? f.type_name + " *" : "struct " + f.type_name;
            f.kind = FieldLayout::Kind::Array;
          }
          f.element = std::move(element);
          f.count = dims[d];
          if (uint64_t{f.size} * dims[d] > kMaxStruct)
            return fail(describe(name, is_union) + " is larger than " +
                        std::to_string(kMaxStruct) + " bytes"),
                   nullptr;
          f.size *= dims[d];
        }
        if (bits >= 0) {
          if (f.kind != FieldLayout::Kind::Int || bits > f.size * 8)
            return fail("bit field '" + field_name + "' of " + describe(name, is_union) +
                        " must be an integer of at least " + std::to_string(bits) + " bits"),
                   nullptr;
          uint32_t unit = f.size * 8;
          uint32_t start = is_union ? 0 : bit_pos;
          if (bits == 0) {
            bit_pos = round_up(bit_pos, unit);  // `int :0;` ends the storage unit
          } else {
            // System V: a bit field does not straddle a boundary of its type's alignment
            // (unless packed).
            if (!packed_ && start / unit != (start + bits - 1) / unit)
              start = round_up(start, unit);
            if (!field_name.empty()) {
              f.offset = start / 8;
              f.bit_offset = start % 8;
              f.bit_size = static_cast<uint32_t>(bits);
              layout->fields.push_back(f);
            }
            if (!is_union)
              bit_pos = start + static_cast<uint32_t>(bits);
            size = std::max(size, (start + static_cast<uint32_t>(bits) + 7) / 8);
          }
          if (!field_name.empty())
            max_align = std::max(max_align, align);
        } else {
          uint32_t offset = is_union ? 0 : round_up((bit_pos + 7) / 8, align);
          if (uint64_t{offset} + f.size > kMaxStruct)
            return fail(describe(name, is_union) + " is larger than " +
                        std::to_string(kMaxStruct) + " bytes"),
                   nullptr;
          f.offset = offset;
          if (!is_union)
            bit_pos = (offset + f.size) * 8;
          size = std::max(size, offset + f.size);
          max_align = std::max(max_align, align);
          layout->fields.push_back(std::move(f));
        }
        if (peek() == ",") {
          next();
          continue;
        }
        if (peek() == ";")
          next();
        else if (peek() != "}")  // the last field's ';' may be left out, as bpftrace allows
          return fail("expected ';' after field '" + field_name + "' of " +
                      describe(name, is_union) + (peek().empty() ? "" : ", not '" + peek() + "'")),
                 nullptr;
        break;
      }
    }
    if (!error_.empty())
      return nullptr;
    if (next() != "}")
      return fail("missing '}' at the end of " + describe(name, is_union)), nullptr;
    layout->align = max_align;
    layout->size = round_up(std::max(size, (bit_pos + 7) / 8), max_align);
    for (auto &p : self_pointers)
      if (p->type_name == name)
        p->size = layout->size;
    if (!name.empty())
      out_.records.push_back(layout);
    return layout;
  }

  static std::string describe(const std::string &name, bool is_union) {
    return std::string(is_union ? "union" : "struct") + (name.empty() ? "" : " " + name);
  }

  std::vector<std::string> tokens_;
  size_t i_ = 0;
  const std::function<const RecordLayout *(const std::string &)> &find_;
  const std::function<std::optional<int64_t>(const std::string &)> &constant_;
  bool packed_;
  std::string error_;
  CDefinitions out_;
};

}  // namespace

Result<CDefinitions> parse_c_definition(
    const std::string &text, const std::function<const RecordLayout *(const std::string &)> &find,
    const std::function<std::optional<int64_t>(const std::string &)> &constant) {
  bool packed = false;
  auto tokens = without_attributes(tokens_of(text), packed);
  return DefinitionParser(std::move(tokens), find, constant, packed).run();
}

}  // namespace rbt::sema
