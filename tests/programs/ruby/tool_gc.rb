# A workload for rubygc: string churn (minor and major GCs), then 5 forced GCs; prints
# GC.count at exit so a test can compare it with the tool's @gc_runs.

def churn = 200_000.times.map { |i| "s#{i}" * 3 }

10.times { churn }
5.times { GC.start }
puts "GC.count=#{GC.count}"
