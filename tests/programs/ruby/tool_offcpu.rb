# A workload for rubyoffcpu: the main thread naps (40 x 40 ms in Kernel#sleep); meanwhile a
# worker waits on a pipe that another feeds every 10 ms (about 0.6 s each). Almost no CPU.

def nap = 40.times { sleep 0.04 }

def wait_for_reply(r) = 60.times { r.read(1) }

r, w = IO.pipe
reader = Thread.new { wait_for_reply(r) }
writer = Thread.new { 60.times { sleep 0.01; w.write("x") } }
nap
[reader, writer].each(&:join)
