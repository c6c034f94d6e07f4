# A workload for rubyrequire: boots like an app, requiring tool_require_slow.rb (whose top
# level takes 1 s, as an initializer that waits on a service would) and a generated file of
# 4,000 methods (the longest parse), then the standard library's set.
require "tmpdir"

dir = Dir.mktmpdir("rbt_tool_require")
generated = File.join(dir, "generated_routes.rb")
File.write(generated, (1..4000).map { |i| "def route_#{i}(req) = [#{i}, req, \"/r/#{i}\"]\n" }.join)
require_relative "tool_require_slow"
require generated
require "set"
File.delete(generated)
Dir.rmdir(dir)
puts route_4000(:ok).inspect
