# A workload for rubystat: for about 3 s, 10 rounds of: 1,000 Event allocations, 100 rescued
# raises and one GC.start. Totals: 10,000 Events, 1,000 raises, 10 forced GCs (GC.count at the
# end counts those and the others).

class Event
  def initialize(at) = @at = at
end

def round
  1_000.times { |i| Event.new(i) }
  100.times do
    raise KeyError, "missing"
  rescue KeyError
  end
  GC.start
end

sleep 0.3  # rbt inspects the process at its first events: give it a moment
10.times do
  round
  sleep 0.3
end
puts "GC.count=#{GC.count}"
