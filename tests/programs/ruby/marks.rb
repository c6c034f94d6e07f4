# Marker workload for tests/runtime/rstack.test (design: ruby-stack.md §6). Every call of
# `mark` records Ruby's own view of the stack (caller_locations) and calls Integer#gcd, whose C
# function rb_gcd rbt probes, on the same line; compare.py checks rbt's rstack against it.
require 'json'
require 'zlib'
require_relative 'marks_lib'

$marks = []
$lock = Mutex.new

def mark
  f = caller_locations(0).map { |l| [l.label, l.path, l.lineno] }; $lock.synchronize { $marks << [Thread.current.native_thread_id, f] }; 1.gcd(1)
end

def recurse(n)
  n.zero? ? mark : recurse(n - 1)
end

def yielder
  yield
end

class Shapes
  define_method(:defined) { mark }
  def with_block(&blk) = blk.call
end

# Over 54 instructions before the mark, so the line comes from the succinct table's blocks.
def long_method
  a = 1; b = 2; c = a + b; d = c * 2; e = d - a; f = e + c; g = f * b; h = g - d
  a = h + 1; b = a * 2; c = b + a; d = c - b; e = d * 3; f = e + d; g = f - e; h = g + f
  a = h + 1; b = a * 2; c = b + a; d = c - b; e = d * 3; f = e + d; g = f - e; h = g + f
  a = h + 1; b = a * 2; c = b + a; d = c - b; e = d * 3; f = e + d; g = f - e; h = g + f
  a = h + 1; b = a * 2; c = b + a; d = c - b; e = d * 3; f = e + d; g = f - e; h = g + f
  a = h + 1; b = a * 2; c = b + a; d = c - b; e = d * 3; f = e + d; g = f - e; h = g + f
  x = [a, b, c, d, e, f, g, h]
  mark
  x
end

def scenarios
  recurse(3)
  recurse(300)                                   # deeper than rstack's default 128
  yielder { mark }
  proc { mark }.call
  -> { mark }.()
  Shapes.new.defined
  Shapes.new.with_block { yielder { mark } }
  [1].map { [2].each { 1.times { mark } } }      # C methods between Ruby frames
  long_method
  eval("mark", binding, "evaluated.rb", 40)
  Object.new.instance_eval("mark", "instance_evaluated.rb", 7)
  Fiber.new { yielder { mark } }.resume
  MarksLib.from_required_file { mark }
end

scenarios
threads = 3.times.map do |i|
  Thread.new { 5.times { scenarios } }
end
# A thread in C code without the GVL meanwhile (zlib deflates outside the GVL).
squeezer = Thread.new { 20.times { Zlib::Deflate.deflate(Random.new(1).bytes(1 << 20)) } }
threads.each(&:join)
squeezer.join
File.write(ARGV[0], JSON.generate($marks)) if ARGV[0]
