# rstack(native) test: IO.read of a large file (ARGV[0]), called from a method in a block: the
# read(2) of libc and the kernel's read path under the Ruby frames.
def read_all(path) = IO.read(path)
20.times { read_all(ARGV[0]) }
