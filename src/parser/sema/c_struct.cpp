#include "c_struct.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
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

// C's alignment of a field (x86-64 and BPF agree): its size for integers and pointers, the
// element's for arrays, a struct's most aligned member for structs. Members of structs nested
// two deep are judged by their size, which is exact for every integer and pointer.
uint32_t align_of(const FieldLayout &f, const RecordLayout *record) {
  switch (f.kind) {
  case FieldLayout::Kind::Pointer:
    return 8;
  case FieldLayout::Kind::Int:
    return f.size ? f.size : 1;
  case FieldLayout::Kind::CharArray:
    return 1;
  case FieldLayout::Kind::Array:
    return f.count && f.size / f.count <= 8 ? f.size / f.count : 8;
  case FieldLayout::Kind::Record: {
    uint32_t a = 1;
    if (record)
      for (auto &inner : record->fields)
        a = std::max(a, inner.kind == FieldLayout::Kind::Record ? 8u : align_of(inner, nullptr));
    return std::min(a, 8u);
  }
  default:
    return 1;
  }
}

}  // namespace

Result<std::shared_ptr<RecordLayout>> parse_c_struct(
    const std::string &text,
    const std::function<const RecordLayout *(const std::string &)> &find) {
  auto tokens = tokens_of(text);
  size_t i = 0;
  auto fail = [&](const std::string &why) {
    return make_error("struct definition", why);
  };
  auto next = [&]() -> std::string { return i < tokens.size() ? tokens[i++] : ""; };
  auto peek = [&]() -> std::string { return i < tokens.size() ? tokens[i] : ""; };
  if (next() != "struct" || !is_identifier(peek()))
    return fail("expected 'struct NAME { ... }'");
  auto layout = std::make_shared<RecordLayout>();
  layout->name = next();
  if (next() != "{")
    return fail("expected '{' after struct " + layout->name);
  uint32_t offset = 0, max_align = 1;
  std::vector<FieldLayout *> self_pointers;
  while (peek() != "}") {
    if (peek().empty())
      return fail("missing '}' at the end of struct " + layout->name);
    // One field: its tokens up to ';'. The last identifier is the name, the words before it
    // the type (`unsigned long long`, `u64`, `struct foo`), then '*'s and an optional [N].
    std::vector<std::string> words;
    int pointers = 0;
    std::vector<uint32_t> dims;  // `int y[2][3]`: {2, 3}
    for (std::string t = next(); t != ";"; t = next()) {
      if (t.empty() || t == "}")
        return fail("expected ';' after a field of struct " + layout->name);
      if (t == "*") {
        pointers++;
      } else if (t == "[") {
        std::string n = next();
        if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) || next() != "]")
          return fail("an array in struct " + layout->name + " needs a constant size");
        errno = 0;
        unsigned long long v = std::strtoull(n.c_str(), nullptr, 0);
        if (errno == ERANGE || v == 0 || v > kMaxArray)
          return fail("an array in struct " + layout->name + " must have 1 to " +
                      std::to_string(kMaxArray) + " elements");
        dims.push_back(static_cast<uint32_t>(v));
      } else if (is_identifier(t)) {
        if (t != "const" && t != "volatile" && t != "signed")
          words.push_back(t);
      } else {
        return fail("unexpected '" + t + "' in struct " + layout->name);
      }
    }
    if (words.size() < 2)
      return fail("a field of struct " + layout->name + " needs a type and a name");
    std::string name = words.back();
    words.pop_back();
    bool is_struct = words[0] == "struct" || words[0] == "union";
    if (is_struct && words.size() != 2)
      return fail("expected 'struct NAME' as the type of field '" + name + "'");
    std::string type;
    for (size_t w = is_struct ? 1 : 0; w < words.size(); w++)
      type += (type.empty() ? "" : " ") + words[w];
    // `unsigned int` is `unsigned`, `long int` is `long`, `short int` is `short`.
    if (!is_struct && words.size() > 1 && type.ends_with(" int"))
      type.resize(type.size() - 4);
    FieldLayout f;
    const RecordLayout *record = nullptr;
    f.name = name;
    if (pointers) {
      f.kind = FieldLayout::Kind::Pointer;
      f.size = 8;
      f.type_name = type;
      auto pointee = std::make_shared<FieldLayout>();
      pointee->type_name = type;
      if (auto s = scalar_named(type)) {
        pointee->kind = pointers == 1 ? FieldLayout::Kind::Int : FieldLayout::Kind::Other;
        pointee->size = s->size;
        pointee->is_signed = s->is_signed;
      } else if (const RecordLayout *r = find(type); r && pointers == 1) {
        pointee->kind = FieldLayout::Kind::Record;
        pointee->size = r->size;
      } else if (type == layout->name && pointers == 1) {
        pointee->kind = FieldLayout::Kind::Record;  // a list's `struct node *next`: size below
        self_pointers.push_back(pointee.get());
      }
      f.pointee = pointee;
    } else if (is_struct || !scalar_named(type)) {
      record = find(type);
      if (!record)
        return fail("unknown type '" + (is_struct ? "struct " + type : type) + "' of field '" +
                    name + "' in struct " + layout->name);
      f.kind = FieldLayout::Kind::Record;
      f.type_name = type;
      f.size = record->size;
    } else {
      auto s = scalar_named(type);
      f.kind = FieldLayout::Kind::Int;
      f.size = s->size;
      f.is_signed = s->is_signed;
      f.type_name = type;
    }
    uint32_t align = align_of(f, record);  // an array aligns as its element
    // An array of arrays is built from the innermost dimension out: `int y[2][3]` is 2 arrays
    // of 3 ints, and only the innermost array of chars is a string.
    for (size_t d = dims.size(); d-- > 0;) {
      auto element = std::make_shared<FieldLayout>(f);
      element->name.clear();
      if (f.kind == FieldLayout::Kind::Int) {
        f.kind = f.size == 1 && d + 1 == dims.size() ? FieldLayout::Kind::CharArray
                                                     : FieldLayout::Kind::Array;
      } else {
        if (f.kind != FieldLayout::Kind::Array && f.kind != FieldLayout::Kind::CharArray)
          f.type_name = (pointers ? type + " *" : "struct " + type);
        f.kind = FieldLayout::Kind::Array;
      }
      f.element = std::move(element);
      f.count = dims[d];
      if (uint64_t{f.size} * dims[d] > kMaxStruct)
        return fail("struct " + layout->name + " is larger than " + std::to_string(kMaxStruct) +
                    " bytes");
      f.size *= dims[d];
    }
    offset = (offset + align - 1) / align * align;
    if (uint64_t{offset} + f.size > kMaxStruct)
      return fail("struct " + layout->name + " is larger than " + std::to_string(kMaxStruct) +
                  " bytes");
    f.offset = offset;
    offset += f.size;
    max_align = std::max(max_align, align);
    layout->fields.push_back(std::move(f));
  }
  next();  // '}'
  layout->size = (offset + max_align - 1) / max_align * max_align;
  for (FieldLayout *p : self_pointers)
    p->size = layout->size;
  return layout;
}

}  // namespace rbt::sema
