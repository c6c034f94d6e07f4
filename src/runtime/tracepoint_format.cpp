#include "tracepoint_format.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "tracefs.h"

namespace rbt::runtime {

namespace {

// "const char * filename" → Pointer to char; "char comm[16]" → CharArray; "int dfd" → Int.
FieldLayout classify(const std::string &decl, uint32_t offset, uint32_t size, bool is_signed) {
  FieldLayout f;
  f.offset = offset;
  f.size = size;
  f.is_signed = is_signed;
  std::string d = decl;
  // An array's brackets follow its name ("char comm[16]"); __data_loc's come before it.
  size_t bracket = !d.empty() && d.back() == ']' ? d.rfind('[') : std::string::npos;
  size_t name_end = bracket == std::string::npos ? d.size() : bracket;
  size_t name_begin = d.find_last_of(" *", name_end - 1);
  name_begin = name_begin == std::string::npos ? 0 : name_begin + 1;
  f.name = d.substr(name_begin, name_end - name_begin);
  std::string type = d.substr(0, name_begin);
  while (!type.empty() && type.back() == ' ')
    type.pop_back();
  f.type_name = type;
  if (type.rfind("__data_loc", 0) == 0) {
    f.kind = type.find("char") != std::string::npos ? FieldLayout::Kind::DataLoc
                                                    : FieldLayout::Kind::Other;
  } else if (bracket != std::string::npos) {
    bool chars = type.find("char") != std::string::npos;
    f.kind = chars ? FieldLayout::Kind::CharArray : FieldLayout::Kind::Array;
    f.count = static_cast<uint32_t>(std::stoul(d.substr(bracket + 1)));
  } else if (type.find('*') != std::string::npos) {
    f.kind = FieldLayout::Kind::Pointer;
    auto pointee = std::make_shared<FieldLayout>();
    std::string base = type.substr(0, type.find('*'));
    while (!base.empty() && base.back() == ' ')
      base.pop_back();
    if (base.rfind("const ", 0) == 0)
      base = base.substr(6);
    pointee->type_name = base;
    bool is_char = base == "char" || base == "unsigned char";
    // `struct __kernel_timespec * rqtp`: a record by name, its fields from the kernel's BTF
    // (naptime.bt reads args->rqtp->tv_sec). One level only: `struct x **` stays opaque.
    size_t stars = static_cast<size_t>(std::count(type.begin(), type.end(), '*'));
    bool is_record = (base.rfind("struct ", 0) == 0 || base.rfind("union ", 0) == 0) && stars == 1;
    pointee->kind = is_char     ? FieldLayout::Kind::Int
                    : is_record ? FieldLayout::Kind::Record
                                : FieldLayout::Kind::Other;
    pointee->size = is_char ? 1 : 0;
    if (is_record)  // records go by their bare name, as BTF names them
      pointee->type_name = base.substr(base.find(' ') + 1);
    // `const char *const * argv` (execve's): a pointer to pointers, so args.argv[1] is a string
    // pointer, not a byte.
    for (size_t level = 1; level < stars; level++) {
      auto outer = std::make_shared<FieldLayout>();
      outer->kind = FieldLayout::Kind::Pointer;
      outer->size = 8;
      outer->type_name = pointee->type_name + " *";
      outer->pointee = pointee;
      pointee = outer;
    }
    f.pointee = pointee;
  } else if (size <= 8) {
    f.kind = FieldLayout::Kind::Int;
    // Syscall tracepoints store every argument in 8 bytes with signed:0; the C type says how
    // wide and how signed the value really is (`int dfd` is -100, not 4294967196).
    static const struct {
      const char *type;
      uint32_t size;
      bool is_signed;
    } kCTypes[] = {{"int", 4, true},           {"unsigned int", 4, false}, {"long", 8, true},
                   {"unsigned long", 8, false}, {"short", 2, true},       {"unsigned short", 2, false},
                   {"pid_t", 4, true},          {"uid_t", 4, false},      {"gid_t", 4, false},
                   {"umode_t", 2, false},       {"size_t", 8, false},     {"off_t", 8, true},
                   {"loff_t", 8, true},         {"char", 1, true},        {"u32", 4, false},
                   {"s32", 4, true}};
    for (auto &c : kCTypes) {
      if (type == c.type && c.size <= size) {
        f.size = c.size;
        f.is_signed = c.is_signed;
      }
    }
  }
  return f;
}

}  // namespace

RecordLayout parse_tracepoint_format(const std::string &name, const std::string &text) {
  RecordLayout layout;
  layout.name = name;
  static const std::regex field_re(
      R"(field:(.*);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);)");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, field_re))
      continue;
    uint32_t offset = std::stoul(m[2]), size = std::stoul(m[3]);
    layout.size = std::max(layout.size, offset + size);
    FieldLayout f = classify(m[1], offset, size, m[4] == "1");
    if (f.name.rfind("common_", 0) == 0)
      continue;
    layout.fields.push_back(std::move(f));
  }
  return layout;
}

Result<RecordLayout> read_tracepoint_format(const std::string &category, const std::string &event) {
  auto root = tracefs_root();
  if (!root)
    return root.error();
  std::string path = *root + "/events/" + category + "/" + event + "/format";
  std::ifstream in(path);
  if (!in)
    return make_error("reading " + path, "no such tracepoint",
                      "list tracepoints with: rbt -l 'tracepoint:" + category + ":*'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_tracepoint_format("tracepoint:" + category + ":" + event, text.str());
}

}  // namespace rbt::runtime
