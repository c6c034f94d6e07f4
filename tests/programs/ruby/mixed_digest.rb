# rstack(native) test: a Digest loop. SHA256.hexdigest calls Ruby methods implemented in C
# (digest, update) through rb_funcall, each a C method frame of its own, down to sha2.so.
require 'digest'
data = "x" * (1 << 16)
n = 0
while n < 4000
  Digest::SHA256.hexdigest(data)
  n += 1
end
