# A workload for rubysyscalls: log_line makes 200 unbuffered write(2) calls to /dev/null, one
# every 5 ms (about a second: the tool meets the process at its first syscalls and inspects it).

out = File.open(File::NULL, "w")
out.sync = true
def log_line(out, i) = out.write("line #{i}\n")

200.times do |i|
  log_line(out, i)
  sleep 0.005
end
