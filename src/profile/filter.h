#pragma once
// Views of a profile for reports: `rbt report --ruby` keeps the Ruby frames of each stack, so
// a sample counts for the Ruby method it ran in (flat) rather than for the interpreter's C
// function under it.

#include "profile.h"

namespace rbt::profile {

// Drops every frame that is not Ruby or a Ruby C method from samples' and markers' stacks.
// Samples keep their values (a sample outside Ruby keeps an empty stack), so totals stay exact.
void keep_ruby_frames(Profile &profile);

}  // namespace rbt::profile
