# A small Ruby workload (about 1-2 s) for rbt's Ruby stack demo and tests:
# string building, nested method calls, blocks, a C method (Array#sort_by) and a few threads.
# Usage: ruby demo.rb [seconds]   (default 1.5)

class Greeter
  def initialize(name)
    @name = name
  end

  def greet(i)
    build_line(i) + "\n"
  end

  private

  def build_line(i)
    parts = []
    3.times { |k| parts << "#{@name}-#{i}-#{k}" }
    parts.join(",")
  end
end

def fib(n)
  n < 2 ? n : fib(n - 1) + fib(n - 2)
end

def churn_strings(greeter, rounds)
  buf = +""
  rounds.times { |i| buf << greeter.greet(i) }
  buf.bytesize
end

def sort_words(count)
  words = Array.new(count) { |i| "w#{(i * 7919) % count}" }
  words.sort_by { |w| w.reverse }.first
end

def work_until(deadline, name)
  greeter = Greeter.new(name)
  iterations = 0
  bytes = 0
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    bytes += churn_strings(greeter, 200)
    fib(15)
    sort_words(500)
    iterations += 1
  end
  [iterations, bytes]
end

seconds = (ARGV[0] || "1.5").to_f
deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
threads = 2.times.map { |t| Thread.new { work_until(deadline, "thread#{t}") } }
main_result = work_until(deadline, "main")
results = threads.map(&:value) << main_result
puts "demo.rb: #{results.sum(&:first)} iterations, #{results.sum(&:last)} bytes"
