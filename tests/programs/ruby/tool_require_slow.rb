# Loaded by tool_require.rb: a top level that takes 1 s (as an initializer waiting on a
# service would), the slowest require of that boot.
sleep 1
SLOW_LIB_READY = true
