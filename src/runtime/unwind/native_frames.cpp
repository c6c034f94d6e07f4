#include "unwind/native_frames.h"

#include <cstring>

#include "mixed_stack.h"

namespace rbt::runtime {

namespace {

const char *stop_reason(uint32_t stop) {
  switch (stop) {
  case RBT_NATIVE_STOP_DEPTH: return "[... more native frames]";
  case RBT_NATIVE_STOP_UNKNOWN: return "[native frames stop: code outside the mapped binaries]";
  case RBT_NATIVE_STOP_NO_CFI: return "[native frames stop: no unwind information]";
  case RBT_NATIVE_STOP_READ: return "[native frames stop: stack unreadable]";
  default: return nullptr;
  }
}

uint64_t word(const uint8_t *value, size_t i) {
  uint64_t v;
  memcpy(&v, value + 8 * i, 8);
  return v;
}

}  // namespace

std::vector<std::string> native_frame_lines(const uint8_t *value, NativeStacks *native,
                                            StackPrinter &printer) {
  std::vector<std::string> out;
  auto stack = native ? native->stack(word(value, 0)) : std::nullopt;
  if (!stack)
    return out;
  for (uint64_t pc : stack->pcs)
    out.push_back(printer.user_function(stack->pid, pc).text);
  if (const char *why = stop_reason(stack->stop))
    out.push_back(why);
  return out;
}

std::vector<std::string> mixed_frame_lines(const uint8_t *value, ruby::RubyStacks *ruby,
                                           NativeStacks *native, StackPrinter &printer) {
  pid_t pid = static_cast<pid_t>(word(value, 3));
  std::vector<ruby::RubyStacks::FrameLine> ruby_lines;
  if (ruby)
    ruby_lines = ruby->frame_lines(word(value, 0));
  // A cut marker of a deep Ruby stack is no frame: it goes back at the root.
  std::string ruby_cut;
  if (!ruby_lines.empty() && ruby_lines.back().text.rfind("[...", 0) == 0) {
    ruby_cut = ruby_lines.back().text;
    ruby_lines.pop_back();
  }
  std::vector<MixedRubyFrame> ruby_frames;
  for (auto &l : ruby_lines)
    ruby_frames.push_back({l.cfunc});

  std::vector<StackPrinter::UserFunction> user;
  std::vector<MixedNativeFrame> native_frames;
  if (auto stack = native ? native->stack(word(value, 1)) : std::nullopt) {
    std::string interpreter = ruby ? ruby->interpreter(pid) : std::string();
    for (uint64_t pc : stack->pcs) {
      auto f = printer.user_function(pid, pc);
      std::string base = f.module.substr(f.module.rfind('/') + 1);
      bool interp = !f.module.empty() &&
                    (f.module == interpreter || base.rfind("libruby", 0) == 0);
      native_frames.push_back({f.function, interp});
      user.push_back(std::move(f));
    }
    // A walk that stopped early says so where it stopped, rootward of the frames it has.
    if (const char *why = stop_reason(stack->stop)) {
      native_frames.push_back({0, false});
      user.push_back({0, why, {}});
    }
  }

  uint8_t kvalue[16];
  memcpy(kvalue, value + 16, 8);
  memcpy(kvalue + 8, value + 24, 8);
  std::vector<std::string> kernel;
  if (static_cast<int64_t>(word(value, 2)) >= 0)
    kernel = printer.frames(Type::stack(StackKind::Kernel, 127, StackMode::Bpftrace), kvalue);

  std::vector<std::string> out;
  for (const MixedRef &r : merge_mixed_stack(ruby_frames, native_frames, kernel.size())) {
    switch (r.source) {
    case MixedSource::Ruby: out.push_back(ruby_lines[r.index].text); break;
    case MixedSource::Native: out.push_back(user[r.index].text); break;
    case MixedSource::Kernel: out.push_back(kernel[r.index]); break;
    }
  }
  if (!ruby_cut.empty())
    out.push_back(ruby_cut);
  return out;
}

}  // namespace rbt::runtime
