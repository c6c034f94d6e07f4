# Workload for tests/runtime/record.test: two named worker threads spend their time in one
# known hot Ruby method (hot_loop, pure Ruby so it is the leaf Ruby frame), a third sleeps in
# nap (off-CPU), and the main thread waits for them.
# Usage: ruby record_workers.rb [seconds]   (default 2)

def hot_loop(deadline)
  x = 0
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    i = 0
    while i < 200_000
      i += 1
      x += i
    end
  end
  x
end

# Naps at least once, however late it starts.
def nap(deadline)
  loop do
    sleep 0.02
    break if Process.clock_gettime(Process::CLOCK_MONOTONIC) >= deadline
  end
end

# The sleeper starts first, and the workers only once it runs: started last, behind two
# workers holding the GVL on a loaded machine, it got its first turn after the deadline and
# never slept (seen under load: no thread named sleeper, no OffCPU marker).
deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || 2).to_f
started = Queue.new
threads = [Thread.new { Thread.current.name = "sleeper"; started << true; nap(deadline) }]
started.pop
threads += 2.times.map do |n|
  Thread.new { Thread.current.name = "worker-#{n}"; hot_loop(deadline) }
end
threads.each(&:join)
