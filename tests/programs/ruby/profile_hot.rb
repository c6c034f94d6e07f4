# A Ruby program whose time goes to one method, `hot` (a plain loop, no blocks or C methods
# in it, so `hot` is the leaf of most samples), with a little in `warm`. For the profile
# format tests: whatever the format, the viewer must show `hot` as the hottest frame.
def hot
  i = 0
  i += 1 while i < 2_000_000
  i
end

def warm
  i = 0
  i += 1 while i < 200_000
  i
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 1.5
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
  hot
  warm
end
