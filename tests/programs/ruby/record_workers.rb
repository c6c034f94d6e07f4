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

def nap(deadline)
  sleep 0.02 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || 2).to_f
threads = 2.times.map do |n|
  Thread.new { Thread.current.name = "worker-#{n}"; hot_loop(deadline) }
end
threads << Thread.new { Thread.current.name = "sleeper"; nap(deadline) }
threads.each(&:join)
