#pragma once
// printf's %gr: GFP (get free pages) flags as the kernel's %pGg prints them, compound names
// first (GFP_KERNEL, then what is left: __GFP_HIGHMEM), unnamed bits in hex.

#include <cstdint>
#include <string>

namespace rbt::output {

std::string gfp_flags_text(uint64_t flags);

}  // namespace rbt::output
