#include "backend_error.h"

#include "diagnostics.h"

namespace rbt::codegen {

Error backend_error(const std::string &text,
                    const std::map<std::string, const ast::Probe *> &function_probes,
                    const std::string &source_name, const std::string &source_text) {
  std::string message = text;
  const ast::Probe *probe = nullptr;
  size_t in = text.find("in function ");
  if (in != std::string::npos) {
    size_t name_start = in + 12;
    size_t name_end = text.find_first_of(" :", name_start);
    std::string name = text.substr(name_start, name_end - name_start);
    for (auto &[fn, p] : function_probes)
      if (name == fn || name.rfind(fn + "_", 0) == 0)
        probe = p;
    size_t colon = text.find("): ", name_end);
    if (colon != std::string::npos)
      message = text.substr(colon + 3);
  }
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  std::string note;
  if (message.find("stack limit is exceeded") != std::string::npos) {
    message = "this probe needs more than the 512 bytes of stack a BPF program has";
    note = "use fewer or shorter string values at once (config max_strlen), or split the work "
           "between probes; please report the script, as rbt should have moved the values to "
           "scratch memory";
  }
  Error e = make_error("generating BPF code", message, note);
  e.detail = "LLVM's BPF back end said: " + text;
  if (probe && !source_text.empty()) {
    SourceFile source(source_name, source_text);
    DiagnosticEngine diags(source);
    diags.error(probe->attach_points.empty() ? probe->range : probe->attach_points.front()->range,
                message, note);
    e.diagnostic = diags.render();
  }
  return e;
}

}  // namespace rbt::codegen
