# rstack(2) at rb_gcd keeps `gcd <cfunc>` and `leaf`; its marker must count the frames below
# leaf as Ruby does (C frames included; the ifunc and dummy frames of enumerators are not frames).
def leaf; $stderr.puts "ruby: #{caller_locations.size} frames below leaf"; 1.gcd(1); end
def f(n) = n.zero? ? leaf : f(n - 1)
[1].each_with_index.map { |x, i| [2].each_slice(1).to_a.each { f(3) } }
