#include "writer.h"

#include <cstdlib>

#include "json.h"
#include "text.h"

namespace rbt::output {

const char *message_kind_name(MessageKind kind) {
  switch (kind) {
  case MessageKind::Printf: return "printf";
  case MessageKind::Time: return "time";
  case MessageKind::Cat: return "cat";
  case MessageKind::Syscall: return "syscall";
  case MessageKind::Join: return "join";
  }
  return "?";
}

void Writer::hold() {
  if (real_out_)
    return;
  std::FILE *mem = open_memstream(&held_, &held_size_);
  if (!mem)
    return;  // without memory, output is simply not held back
  real_out_ = out_;
  out_ = mem;
}

std::string Writer::release() {
  if (!real_out_)
    return {};
  fclose(out_);  // sets held_ and held_size_
  out_ = real_out_;
  real_out_ = nullptr;
  std::string text(held_, held_size_);
  free(held_);
  held_ = nullptr;
  return text;
}

void Writer::write_held(const std::string &text) {
  fwrite(text.data(), 1, text.size(), out_);
  flush();
}

std::unique_ptr<Writer> make_writer(OutputFormat format, std::FILE *out, bool quiet) {
  if (format == OutputFormat::Json)
    return std::make_unique<JsonWriter>(out, quiet);
  return std::make_unique<TextWriter>(out, quiet);
}

}  // namespace rbt::output
