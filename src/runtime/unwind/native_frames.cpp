#include "unwind/native_frames.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

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

// A native frame: `sym+off` in text, the function alone in profiles (so samples in one
// function merge). A stripped binary's function prints as `binary+0xPC`; in profiles it is
// `binary+0xSTART`, the start its CFI gives, when known (f.function, `pc`'s function).
profile::Frame native_frame(const StackPrinter::UserFunction &f, bool offsets, uint64_t pc) {
  std::string name = f.text;
  std::string base = f.module.substr(f.module.rfind('/') + 1);
  if (!offsets && name.rfind(base + "+", 0) != 0) {
    name = name.substr(0, name.find('+'));
  } else if (!offsets && f.function && f.function <= pc &&
             name.rfind(base + "+0x", 0) == 0) {
    uint64_t vaddr = std::strtoull(name.c_str() + base.size() + 3, nullptr, 16);
    char buf[32];
    snprintf(buf, sizeof(buf), "+0x%llx",
             static_cast<unsigned long long>(vaddr - (pc - f.function)));
    name = base + buf;
  }
  return profile::Frame{profile::FrameKind::Native, name, "", 0, f.module};
}

profile::Frame marker(const char *text) {
  return profile::Frame{profile::FrameKind::Truncated, text, "", 0, ""};
}

}  // namespace

std::vector<profile::Frame> native_frame_records(const uint8_t *value, NativeStacks *native,
                                                 StackPrinter &printer, bool offsets) {
  std::vector<profile::Frame> out;
  auto stack = native ? native->stack(word(value, 0)) : std::nullopt;
  if (!stack)
    return out;
  for (uint64_t pc : stack->pcs)
    out.push_back(
        native_frame(printer.user_function(stack->pid, pc), offsets && !stack->functions, pc));
  if (const char *why = stop_reason(stack->stop))
    out.push_back(marker(why));
  return out;
}

std::vector<profile::Frame> mixed_frame_records(const uint8_t *value, ruby::RubyStacks *ruby,
                                                NativeStacks *native, StackPrinter &printer,
                                                bool offsets) {
  MixedStackIds ids;
  ids.ruby = word(value, 0);
  ids.native = word(value, 1);
  ids.kernel = static_cast<int64_t>(word(value, 2));
  ids.pid = static_cast<int32_t>(word(value, 3));
  return mixed_frame_records(ids, ruby, native, printer, offsets);
}

std::vector<profile::Frame> mixed_frame_records(const MixedStackIds &ids, ruby::RubyStacks *ruby,
                                                NativeStacks *native, StackPrinter &printer,
                                                bool offsets) {
  pid_t pid = ids.pid;
  std::vector<profile::Frame> ruby_records;
  std::vector<uint64_t> cfuncs;
  if (ruby && ids.ruby)
    ruby_records = ruby->frame_records(ids.ruby, 0, &cfuncs);
  // A cut marker of a deep Ruby stack is no frame: it goes back at the root.
  std::optional<profile::Frame> ruby_cut;
  if (!ruby_records.empty() && ruby_records.back().kind == profile::FrameKind::Truncated &&
      ruby_records.back().name.rfind("[...", 0) == 0) {
    ruby_cut = ruby_records.back();
    ruby_records.pop_back();
    cfuncs.pop_back();
  }
  std::vector<MixedRubyFrame> ruby_frames;
  for (uint64_t cfunc : cfuncs)
    ruby_frames.push_back({cfunc});

  std::vector<profile::Frame> user;
  std::vector<MixedNativeFrame> native_frames;
  if (auto stack = native ? native->stack(ids.native) : std::nullopt) {
    std::string interpreter = ruby ? ruby->interpreter(pid) : std::string();
    for (uint64_t pc : stack->pcs) {
      auto f = printer.user_function(pid, pc);
      std::string base = f.module.substr(f.module.rfind('/') + 1);
      bool interp = !f.module.empty() &&
                    (f.module == interpreter || base.rfind("libruby", 0) == 0);
      native_frames.push_back({f.function, interp});
      user.push_back(native_frame(f, offsets && !stack->functions, pc));
    }
    // A walk that stopped early says so where it stopped, rootward of the frames it has.
    if (const char *why = stop_reason(stack->stop)) {
      native_frames.push_back({0, false});
      user.push_back(marker(why));
    }
  }

  uint8_t kvalue[16];  // kstack's value: {id, pid}
  uint64_t kpid = static_cast<uint64_t>(ids.pid);
  memcpy(kvalue, &ids.kernel, 8);
  memcpy(kvalue + 8, &kpid, 8);
  std::vector<profile::Frame> kernel;
  if (ids.kernel >= 0) {
    Type ktype = Type::stack(StackKind::Kernel, 127, StackMode::Bpftrace);
    if (offsets) {
      for (auto &line : printer.frames(ktype, kvalue))
        kernel.push_back(profile::Frame{profile::FrameKind::Kernel, line, "", 0, "[kernel]"});
    } else {
      kernel = printer.frame_records(ktype, kvalue);
    }
  }

  std::vector<profile::Frame> out;
  for (const MixedRef &r : merge_mixed_stack(ruby_frames, native_frames, kernel.size())) {
    switch (r.source) {
    case MixedSource::Ruby: out.push_back(ruby_records[r.index]); break;
    case MixedSource::Native: out.push_back(user[r.index]); break;
    case MixedSource::Kernel: out.push_back(kernel[r.index]); break;
    }
  }
  if (ruby_cut)
    out.push_back(*ruby_cut);
  return out;
}

std::vector<std::string> native_frame_lines(const uint8_t *value, NativeStacks *native,
                                            StackPrinter &printer) {
  std::vector<std::string> out;
  for (const auto &f : native_frame_records(value, native, printer, true))
    out.push_back(profile::frame_text(f));
  return out;
}

std::vector<std::string> mixed_frame_lines(const uint8_t *value, ruby::RubyStacks *ruby,
                                           NativeStacks *native, StackPrinter &printer) {
  std::vector<std::string> out;
  for (const auto &f : mixed_frame_records(value, ruby, native, printer, true))
    out.push_back(profile::frame_text(f));
  return out;
}

}  // namespace rbt::runtime
