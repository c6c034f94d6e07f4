# A workload for rubymethodlat: slow_query sleeps 20 ms, 10 times; fast_helper returns at
# once, 2,000 times. Ruby fires its method__entry/return probes only while a TracePoint for
# :call/:return is enabled, so that work runs inside one that does nothing; warm_up runs 50
# times before it, unseen by the probes.

def slow_query = sleep(0.02)

def fast_helper(i) = i + 1

def warm_up = nil

sleep 0.3  # rbt inspects the process at its first events: give it a moment
50.times { warm_up }
TracePoint.new(:call, :return) {}.enable do
  10.times { slow_query }
  2_000.times { |i| fast_helper(i) }
end
