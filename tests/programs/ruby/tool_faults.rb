# A workload for rubyfaults: fill_buffers builds 16 strings of 4 MiB and keeps them all, so
# each is fresh memory whose 1,024 pages fault in once, as String#* writes them: 16,384 page
# faults under fill_buffers (64 MiB), against a few thousand for the rest of the process.

def fill_buffers = Array.new(16) { "x" * (4 << 20) }

sleep 0.3  # rbt inspects the process at its first events: give it a moment
kept = fill_buffers
puts "#{kept.sum(&:bytesize) >> 20} MiB"
