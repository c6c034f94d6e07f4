# A workload for rubyprofile: all the CPU work runs in two Thread.new workers (which Ruby names
# after this file:line, so their comm is not "ruby"); the main thread only joins them.

def crunch_numbers
  x = 0
  4_000_000.times { |i| x += i * 2 }
  x
end

def idle_a_bit = sleep(0.01)

workers = 2.times.map do
  Thread.new do
    3.times { crunch_numbers; idle_a_bit }
  end
end
workers.each(&:join)
