# A workload for rubyexceptions: 30 ArgumentErrors from parse_port, 5 KeyErrors from lookup,
# all rescued.

def parse_port(text) = Integer(text)

def lookup(h, k) = h.fetch(k)

30.times do |i|
  parse_port("port#{i}")
rescue ArgumentError
end
5.times do
  lookup({}, :missing)
rescue KeyError
end
