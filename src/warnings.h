#pragma once
// --no-warnings: one switch for the whole process. Warnings are printed by every layer (the
// checker's diagnostics, the cache, the runtime's events, -k's failed reads); a flag read where
// each is printed keeps the option out of dozens of signatures.

namespace rbt {

inline bool warnings_suppressed = false;

}  // namespace rbt
