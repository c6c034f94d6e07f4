#pragma once
// The CSS and JavaScript embedded in rbt's flamegraph SVG (svg.cpp): zoom, search, tooltips.
// Kept apart from the layout code so each reads on its own.

namespace rbt::profile {

extern const char *const kFlamegraphStyle;
extern const char *const kFlamegraphScript;

}  // namespace rbt::profile
