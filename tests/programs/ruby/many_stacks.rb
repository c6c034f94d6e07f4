# Many distinct stacks in a short time: 300 methods (each its own iseq), called in turn, each
# spinning a little. A sampler that records both rstack(2) and rstack(5) meets two new stacks in
# most of its first samples, which is what made the second one "[unknown Ruby stack]" when the
# stacks map could not allocate twice in one perf-event program.
300.times do |i|
  eval("def m#{i}(k) = k.zero? ? spin : m#{i}(k - 1)")
end
def spin = (x = 0; 3000.times { x += 1 }; x)
deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 2.0
i = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
  send(:"m#{i % 300}", 3)
  i += 1
end
