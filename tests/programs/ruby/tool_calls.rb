# A workload for rubycalls: sort_batches sorts an array of 200,000 integers 20 times
# (Array#sort: few calls, most of the time); shout calls String#swapcase 5,000 times (many
# cheap calls).

def sort_batches(data) = 20.times { data.sort }

def shout = 5_000.times { "quiet words".swapcase }

sort_batches((0...200_000).to_a.shuffle(random: Random.new(1)))
shout
