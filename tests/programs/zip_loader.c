// zip_loader ARCHIVE OFFSET N: maps ARCHIVE executable (as Android's linker maps a library
// stored in an APK, straight from the zip file) and calls the function at file offset OFFSET
// (an int(int), e.g. zip_lib's rbt_zip_work) for x = 0..N-1, then prints the sum of results.
// A uprobe on the archive at that offset fires for these calls.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: zip_loader ARCHIVE OFFSET N\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  char *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  int (*fn)(int) = (int (*)(int))(void *)(base + strtoull(argv[2], NULL, 0));
  long sum = 0;
  for (int i = 0, n = atoi(argv[3]); i < n; i++)
    sum += fn(i);
  printf("sum %ld\n", sum);
  return 0;
}
