# A workload for rubyfunclat: each interpolation "row #{i}" makes its String with one
# rb_str_new call; render_rows makes 3,000 of them, render_header 300 (from 10 on: Ruby 3.1
# turns the digits 0 to 9 into Strings without rb_str_new).

def render_rows = (10...3010).map { |i| "row #{i}" }

def render_header = (10...310).map { |i| "col #{i}" }

sleep 0.3  # rbt inspects the process at its first events: give it a moment
puts render_rows.size + render_header.size
