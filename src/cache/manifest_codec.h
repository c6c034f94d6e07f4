#pragma once
// The Manifest as bytes, so that a cached object carries what the runtime needs to load it
// without compiling the script again. Every field is written; the codec's static_asserts on the
// structs' sizes stop the build when a field is added without being written here.

#include <optional>
#include <string>

#include "byte_codec.h"
#include "manifest.h"

namespace rbt::cache {

void write_manifest(ByteWriter &w, const Manifest &m);
// Nothing when the bytes are not a manifest this build wrote (the reader has failed()).
std::optional<Manifest> read_manifest(ByteReader &r);

}  // namespace rbt::cache
