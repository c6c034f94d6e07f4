# A thread that never runs Ruby in a Ruby process: rstack must give it an empty stack, whichever
# way the thread's execution context is looked up. rstack.test probes getppid, which a Ruby
# thread calls first (Process.ppid: a Ruby stack), then a bare pthread whose start routine is
# getppid itself (created through Fiddle: no Ruby on it, not in the VM's threads list).
require 'fiddle'

libc = Fiddle::Handle::DEFAULT
create = Fiddle::Function.new(libc['pthread_create'], [Fiddle::TYPE_VOIDP] * 4, Fiddle::TYPE_INT)
join = Fiddle::Function.new(libc['pthread_join'], [Fiddle::TYPE_UINTPTR_T, Fiddle::TYPE_VOIDP],
                            Fiddle::TYPE_INT)

def parent_from_ruby = Process.ppid

Thread.new { parent_from_ruby }.join
id = Fiddle::Pointer.malloc(8)
create.call(id, nil, libc['getppid'], nil)
join.call(id[0, 8].unpack1('Q'), nil)
