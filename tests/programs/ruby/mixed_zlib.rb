# rstack(native) test: zlib deflating inside a block that Array#each calls, ARGV[0] times (20,000
# by default). Each Zlib.deflate enters libz's deflate() through zlib.so, the GVL released.
require 'zlib'
data = Random.new(1).bytes(1 << 12)
(1..(ARGV[0] || 20_000).to_i).to_a.each do |i|
  Zlib.deflate(data)
end
