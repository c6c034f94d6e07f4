#pragma once
// Frame lines of the stacks that involve native unwinding: nstack (native frames only) and
// rstack(native) (Ruby, native and kernel frames merged by merge_mixed_stack). The session's
// output callback calls these; text, JSON and map keys all print through it.

#include <cstdint>
#include <string>
#include <vector>

#include "mixed_stack.h"
#include "ruby/ruby_stacks.h"
#include "stacks.h"
#include "unwind/native_stacks.h"

namespace rbt::runtime {

// The same stacks as structured frames (text, JSON and map keys print their frame_text; the
// profile formats take them whole). `offsets`: native and kernel frames as `sym+off` (text),
// else the function alone, so a profile's samples in one function merge.
std::vector<profile::Frame> native_frame_records(const uint8_t *value, NativeStacks *native,
                                                 StackPrinter &printer, bool offsets);
std::vector<profile::Frame> mixed_frame_records(const uint8_t *value, ruby::RubyStacks *ruby,
                                                NativeStacks *native, StackPrinter &printer,
                                                bool offsets);
// The same merge from the three stacks' ids (mixed_stack.h), wherever they come from.
std::vector<profile::Frame> mixed_frame_records(const MixedStackIds &ids, ruby::RubyStacks *ruby,
                                                NativeStacks *native, StackPrinter &printer,
                                                bool offsets);

// nstack's value {id, pid}: `sym+off` per frame, leaf first, and a last line saying why the
// walk stopped early when it did.
std::vector<std::string> native_frame_lines(const uint8_t *value, NativeStacks *native,
                                            StackPrinter &printer);

// rstack(native)'s value {ruby id, native id, kernel id, pid}: one stack, leaf first: kernel
// frames, native frames (`sym+off`), Ruby frames as rstack prints them.
std::vector<std::string> mixed_frame_lines(const uint8_t *value, ruby::RubyStacks *ruby,
                                           NativeStacks *native, StackPrinter &printer);

}  // namespace rbt::runtime
