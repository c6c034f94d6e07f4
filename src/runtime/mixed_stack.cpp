#include "mixed_stack.h"

#include <algorithm>

namespace rbt::runtime {

std::vector<MixedRef> merge_mixed_stack(std::span<const MixedRubyFrame> ruby,
                                        std::span<const MixedNativeFrame> native,
                                        size_t kernel_frames) {
  std::vector<MixedRef> root_first;
  const size_t n = native.size();
  // Native frame i root-first is native[n - 1 - i] leaf-first.
  auto nat = [&](size_t i) -> const MixedNativeFrame & { return native[n - 1 - i]; };
  auto push_native = [&](size_t i) {
    if (!nat(i).interpreter)
      root_first.push_back({MixedSource::Native, n - 1 - i});
  };

  if (ruby.empty()) {
    for (size_t i = 0; i < n; i++)
      root_first.push_back({MixedSource::Native, n - 1 - i});
  } else {
    // Each C method's anchor, root to leaf, each searched after the one before.
    std::vector<size_t> anchor(ruby.size(), n);
    for (size_t r = ruby.size(), cursor = 0; r-- > 0;) {
      if (!ruby[r].cfunc)
        continue;
      for (size_t i = cursor; i < n; i++)
        if (nat(i).function == ruby[r].cfunc) {
          anchor[r] = i;
          cursor = i + 1;
          break;
        }
    }
    auto next_anchor = [&](size_t r) {  // the first anchor leafward of Ruby frame r
      while (r-- > 0)
        if (anchor[r] < n)
          return anchor[r];
      return n;
    };
    // The last interpreter frame in [b, e), or e when there is none.
    auto last_interpreter = [&](size_t b, size_t e) {
      for (size_t i = e; i-- > b;)
        if (nat(i).interpreter)
          return i;
      return e;
    };
    // Frames past a segment's last interpreter frame ran under the Ruby code that frame runs:
    // they wait for the next C method's Ruby frame (or the leaf).
    size_t tail_begin = 0, tail_end = 0;
    auto flush_tail = [&] {
      for (size_t i = tail_begin; i < tail_end; i++)
        push_native(i);
      tail_begin = tail_end = 0;
    };
    // Before the first anchor: the launch (_start, __libc_start_main, main, ruby_run_node...)
    // up to the last interpreter frame, dropped; what follows it waits as a tail.
    size_t first = next_anchor(ruby.size());
    size_t last = last_interpreter(0, first);
    tail_begin = last == first ? 0 : last + 1;
    tail_end = first;
    for (size_t r = ruby.size(); r-- > 0;) {
      if (anchor[r] == n) {
        root_first.push_back({MixedSource::Ruby, r});
        continue;
      }
      flush_tail();
      root_first.push_back({MixedSource::Ruby, r});
      size_t a = anchor[r], e = next_anchor(r), l = last_interpreter(a + 1, e);
      for (size_t i = a; i < (l == e ? e : l + 1); i++)
        push_native(i);
      if (l != e) {
        tail_begin = l + 1;
        tail_end = e;
      }
    }
    flush_tail();
  }
  std::reverse(root_first.begin(), root_first.end());
  std::vector<MixedRef> leaf_first;
  leaf_first.reserve(kernel_frames + root_first.size());
  for (size_t k = 0; k < kernel_frames; k++)
    leaf_first.push_back({MixedSource::Kernel, k});
  leaf_first.insert(leaf_first.end(), root_first.begin(), root_first.end());
  return leaf_first;
}

}  // namespace rbt::runtime
