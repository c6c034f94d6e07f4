// merge_mixed_stack's rules on stacks written root first, as a reader reads them: Ruby frames
// by label ("each" a C method when it names a function in `cfuncs`), native frames by function
// ("vm_exec_core*": an interpreter frame), kernel frames last.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "mixed_stack.h"

using namespace rbt::runtime;

namespace {

struct Case {
  std::vector<std::string> ruby;    // root first; "label=func": a C method implemented by func
  std::vector<std::string> native;  // root first; a trailing '*' marks an interpreter frame
  std::vector<std::string> kernel;  // root first
};

// The merged stack, root first, one name per frame ("R:" Ruby, "N:" native, "K:" kernel).
std::string merged(const Case &c) {
  std::map<std::string, uint64_t> address;
  auto addr = [&](const std::string &f) {
    auto [it, _] = address.emplace(f, 0x1000 * (address.size() + 1));
    return it->second;
  };
  std::vector<MixedRubyFrame> ruby;
  std::vector<std::string> ruby_names, native_names;
  for (auto it = c.ruby.rbegin(); it != c.ruby.rend(); ++it) {
    auto eq = it->find('=');
    ruby.push_back({eq == std::string::npos ? 0 : addr(it->substr(eq + 1))});
    ruby_names.push_back(it->substr(0, eq));
  }
  std::vector<MixedNativeFrame> native;
  for (auto it = c.native.rbegin(); it != c.native.rend(); ++it) {
    bool interp = it->back() == '*';
    std::string name = interp ? it->substr(0, it->size() - 1) : *it;
    native.push_back({addr(name), interp});
    native_names.push_back(name);
  }
  auto refs = merge_mixed_stack(ruby, native, c.kernel.size());
  std::string out;
  for (auto it = refs.rbegin(); it != refs.rend(); ++it) {
    if (!out.empty())
      out += " ";
    switch (it->source) {
    case MixedSource::Ruby: out += "R:" + ruby_names[it->index]; break;
    case MixedSource::Native: out += "N:" + native_names[it->index]; break;
    case MixedSource::Kernel: out += "K:" + c.kernel[c.kernel.size() - 1 - it->index]; break;
    }
  }
  return out;
}

const std::vector<std::string> kBoot = {"_start*", "__libc_start_main", "main*", "ruby_run_node*",
                                        "vm_exec_core*"};

std::vector<std::string> boot_then(std::vector<std::string> rest) {
  auto v = kBoot;
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

}  // namespace

// Ruby → each (C) → block (Ruby) → Zlib.deflate (C extension) → libz → libc → kernel.
TEST(MixedStack, each_segment_sits_under_the_ruby_frame_that_called_it) {
  Case c;
  c.ruby = {"<main>", "each=rb_ary_each", "block in <main>", "deflate=rb_deflate_s_deflate"};
  c.native = boot_then({"rb_ary_each*", "rb_yield*", "vm_exec_core*", "vm_call_cfunc*",
                        "rb_deflate_s_deflate", "deflate", "deflate_slow", "memcpy"});
  c.kernel = {"asm_exc_page_fault", "exc_page_fault"};
  EXPECT_EQ(merged(c), "R:<main> R:each R:block in <main> R:deflate N:rb_deflate_s_deflate "
                       "N:deflate N:deflate_slow N:memcpy K:asm_exc_page_fault K:exc_page_fault");
}

// A C extension that calls back into Ruby through a helper of its own: the helper stays under
// the extension's Ruby frame, before the Ruby method it calls.
TEST(MixedStack, extension_frames_before_a_callback_stay_under_their_c_method) {
  Case c;
  c.ruby = {"<main>", "ext_each=ext_each_impl", "callback", "read=io_read"};
  c.native = boot_then({"ext_each_impl", "ext_helper", "rb_funcall*", "vm_exec_core*",
                        "io_read*", "rb_io_read_memory*", "__libc_read"});
  c.kernel = {"ksys_read", "vfs_read"};
  EXPECT_EQ(merged(c), "R:<main> R:ext_each N:ext_each_impl N:ext_helper R:callback R:read "
                       "N:__libc_read K:ksys_read K:vfs_read");
}

// The same C function twice on the stack (nested each): each Ruby frame takes its own anchor.
TEST(MixedStack, nested_calls_of_one_c_function_anchor_in_order) {
  Case c;
  c.ruby = {"<main>", "ext=ext_f", "block", "ext=ext_f", "block"};  // leaf: a Ruby block
  c.native = boot_then({"ext_f", "inner1", "rb_yield*", "vm_exec_core*", "ext_f", "inner2",
                        "rb_yield*", "vm_exec_core*", "malloc"});
  EXPECT_EQ(merged(c),
            "R:<main> R:ext N:ext_f N:inner1 R:block R:ext N:ext_f N:inner2 R:block N:malloc");
}

// A Ruby method allocating: no C method on the stack, the libc frame goes under the leaf.
TEST(MixedStack, without_c_methods_native_frames_go_under_the_leaf) {
  Case c;
  c.ruby = {"<main>", "work"};
  c.native = boot_then({"rb_str_new*", "ruby_xmalloc*", "malloc", "_int_malloc"});
  c.kernel = {"do_brk_flags"};
  EXPECT_EQ(merged(c), "R:<main> R:work N:malloc N:_int_malloc K:do_brk_flags");
}

// Only interpreter frames above the Ruby code: none of them appears.
TEST(MixedStack, interpreter_frames_are_absent) {
  Case c;
  c.ruby = {"<main>", "loop=rb_f_loop", "block", "gcd=rb_gcd"};
  c.native = boot_then({"rb_f_loop*", "rb_rescue2*", "rb_yield*", "vm_exec_core*",
                        "vm_call_cfunc*", "rb_gcd*"});
  EXPECT_EQ(merged(c), "R:<main> R:loop R:block R:gcd");
}

// A C method whose function the native walk did not reach keeps its Ruby frame.
TEST(MixedStack, unanchored_c_method_keeps_its_ruby_frame) {
  Case c;
  c.ruby = {"<main>", "each=rb_ary_each", "block", "write=io_write"};
  c.native = boot_then({"rb_ary_each*", "rb_yield*", "vm_exec_core*", "__libc_write"});
  EXPECT_EQ(merged(c), "R:<main> R:each R:block R:write N:__libc_write");
}

// Not a Ruby thread (or no Ruby yet): the native stack as it is, launch frames included.
TEST(MixedStack, no_ruby_frames_keeps_the_native_stack) {
  Case c;
  c.native = {"_start", "__libc_start_main", "main", "compress", "deflate"};
  c.kernel = {"ksys_write"};
  EXPECT_EQ(merged(c), "N:_start N:__libc_start_main N:main N:compress N:deflate K:ksys_write");
}

TEST(MixedStack, empty_inputs_give_an_empty_stack) {
  EXPECT_EQ(merged(Case{}), "");
}
