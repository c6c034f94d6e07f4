#!/bin/sh
# Prints how many uprobe_multi links the rbt running this script (through system(), under
# --unsafe) holds, from its descriptors' fdinfo: other tests may run rbt at the same time.
p=$PPID
while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm 2>/dev/null)" != rbt ]; do
  p=$(awk '{print $4}' /proc/$p/stat)
done
n=$(grep -lE '^link_type:[[:space:]]*u(ret)?probe_multi' /proc/$p/fdinfo/* 2>/dev/null | wc -l)
echo "uprobe_multi links: $n"
