# rstack(native) test: zlib deflating inside a block that Array#each calls. Each Zlib.deflate
# call enters libz's deflate() through the zlib extension (zlib.so), with the GVL released.
require 'zlib'
data = Random.new(1).bytes(1 << 12)
(1..20_000).to_a.each do |i|
  Zlib.deflate(data)
end
