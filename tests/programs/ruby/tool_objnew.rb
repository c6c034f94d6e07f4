# A workload for rubyobjnew: make_points allocates 20,000 Point objects, make_pairs 5,000
# hashes ({x:, y:} literals) and index_names 3,000 arrays ([a, b] literals).

class Point
  def initialize(x, y)
    @x = x
    @y = y
  end
end

def make_points = 20_000.times.map { |i| Point.new(i, i) }

def make_pairs = 5_000.times.map { |i| { x: i, y: i } }

def index_names = 3_000.times.map { |i| [i, i] }

sleep 0.3  # rbt inspects the process at its first events: give it a moment
puts make_points.size + make_pairs.size + index_names.size
