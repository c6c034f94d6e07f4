# A workload for rubyio: save_journal writes 16 blocks of 64 KiB to a file on disk, each made
# durable by fsync (so this thread submits the block writes), then load_journal drops the
# file from the page cache and reads it back (block reads). 1 MiB each way.
# ruby tool_io.rb [DIR]   (default: a new directory in /var/tmp, removed at the end)
require "tmpdir"

BLOCK = ("journal entry\n" * 4681).ljust(65_536, ".").freeze

def save_journal(path)
  File.open(path, "w") do |f|
    16.times do
      f.write(BLOCK)
      f.fsync
    end
  end
end

def load_journal(path)
  File.open(path) do |f|
    f.advise(:dontneed)  # the pages are clean after fsync: dropped, so the read goes to disk
    f.read.bytesize
  end
end

dir = ARGV[0] || Dir.mktmpdir("rbt_tool_io", "/var/tmp")
path = File.join(dir, "journal.dat")
sleep 0.3  # rbt inspects the process at its first events: give it a moment
save_journal(path)
puts "read #{load_journal(path)} bytes"
File.delete(path)
Dir.rmdir(dir) unless ARGV[0]
