# Sampling workload for tests/runtime/rstack.test: one thread spins in Ruby code, another
# spends its time in zlib without the GVL. Each thread's samples must show only its own code
# (an anchor on the GVL holder would give the zlib thread the spinner's stack).
require 'zlib'

def spin_ruby(deadline)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
  x
end

def squeeze_zlib(deadline, data)
  Zlib::Deflate.deflate(data, Zlib::BEST_COMPRESSION) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || 2).to_f
data = Random.new(7).bytes(1 << 20)
spinner = Thread.new { Thread.current.name = "rb_spin"; spin_ruby(deadline) }
squeezer = Thread.new { Thread.current.name = "rb_zlib"; squeeze_zlib(deadline, data) }
[spinner, squeezer].each(&:join)
