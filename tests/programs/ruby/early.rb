# A Ruby program whose marks come early (tests/programs/ruby/everywhere.py): in the file it
# requires first, on its own first line, then in a block. The arguments after the output
# file name what else to do:
#   fork        a Process.fork child marks too (its marks go to OUT.child)
#   exec        after marking, exec a new ruby running this file (marks to OUT.exec)
#   late        sleep, then mark again (what the first process of an unseen libruby gets)
#   loop:FILE   mark until FILE exists (for -p)
#   wait:FILE   before exiting, wait until FILE exists (lets the test read the host pid)
require_relative 'early_lib'
mark
$out = ARGV[0]
def twice = [1, 2].each { mark }
twice
ARGV[1..].each do |action|
  case action
  when 'fork'
    child = Process.fork { $marks = []; mark; twice; save_marks("#{$out}.child") }
    Process.wait(child)
  when 'exec'
    save_marks
    exec('ruby', __FILE__, "#{$out}.exec")
  when 'late'
    sleep 0.5
    twice
  when /\Aloop:(.*)/
    twice until File.exist?($1) || !sleep(0.01)
  when /\Await:(.*)/
    sleep 0.01 until File.exist?($1)
  end
end
save_marks
