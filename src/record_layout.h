#pragma once
// The layout of a C record the kernel describes: a tracepoint's format (tracefs) or a struct in
// the kernel's BTF. The runtime reads them; the type checker turns them into rbt types. Neither
// needs the other's headers.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rbt {

struct FieldLayout {
  // DataLoc: a tracepoint's `__data_loc char[]`, a u32 holding (length << 16 | offset) of a
  // string stored later in the same record.
  // Float: a C float/double/long double (BTF_KIND_FLOAT): BPF cannot compute with it, so it is
  // held only as bytes inside a copied struct.
  enum class Kind : uint8_t { Int, Pointer, Record, CharArray, Array, DataLoc, Other, Float };
  std::string name;
  Kind kind = Kind::Other;
  uint32_t offset = 0;  // bytes from the start of the record
  uint32_t size = 0;    // bytes
  bool is_signed = false;
  uint32_t bit_offset = 0, bit_size = 0;  // bit fields (bit_size 0 when not one)
  std::string type_name;  // Record: the struct's name; Pointer: the pointee's ("task_struct",
                          // "char"); as written in C otherwise
  std::shared_ptr<FieldLayout> pointee;  // Pointer: what it points to (Int/Record/Other)
  uint32_t count = 0;     // arrays: number of elements
  // Arrays: one element's layout, when known (`int y[2][3]`: an Array of 2 whose element is an
  // Array of 3 ints; `int *z[4]`: its element is a Pointer).
  std::shared_ptr<FieldLayout> element;
};

struct RecordLayout {
  std::string name;
  uint32_t size = 0;
  uint32_t align = 0;  // bytes; 0 when unknown (BTF records: judged by their members)
  std::vector<FieldLayout> fields;

  const FieldLayout *find(const std::string &field) const {
    for (auto &f : fields)
      if (f.name == field)
        return &f;
    return nullptr;
  }
};

}  // namespace rbt
