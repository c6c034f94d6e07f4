#include "writer.h"

#include "json.h"
#include "text.h"

namespace rbt::output {

const char *message_kind_name(MessageKind kind) {
  switch (kind) {
  case MessageKind::Printf: return "printf";
  case MessageKind::Time: return "time";
  case MessageKind::Cat: return "cat";
  case MessageKind::Syscall: return "syscall";
  }
  return "?";
}

std::unique_ptr<Writer> make_writer(OutputFormat format, std::FILE *out, bool quiet) {
  if (format == OutputFormat::Json)
    return std::make_unique<JsonWriter>(out, quiet);
  return std::make_unique<TextWriter>(out, quiet);
}

}  // namespace rbt::output
