# Required first by early.rb: defines the marker and marks while the file is being required,
# before the main script's first line runs (design: docs/rstack-discovery.md).
$marks = []
$out = nil

# The C method rbt probes is on the same line as caller_locations: Array#assoc (uprobe on
# rb_ary_assoc, which Ruby's own start-up never calls and other tests do not use, so rbt
# system-wide is not flooded by other Ruby processes' marks), or with RBT_MARK=ppid
# Process.ppid (the getppid syscall's tracepoint, which needs no libruby file named at attach).
if ENV['RBT_MARK'] == 'ppid'
  def mark
    $marks << [Process.pid, Thread.current.native_thread_id, caller_locations(0).map { |l| [l.label, l.path, l.lineno] }]; Process.ppid
  end
else
  def mark
    $marks << [Process.pid, Thread.current.native_thread_id, caller_locations(0).map { |l| [l.label, l.path, l.lineno] }]; [[1]].assoc(1)
  end
end

def save_marks(path = $out)
  require 'json'
  File.write(path, JSON.generate($marks)) if path
end

mark
