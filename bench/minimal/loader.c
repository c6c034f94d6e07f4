// User-space loader for count.bpf.o (bench/event_cost.py's "minimal" tool):
//
//   loader OBJ uprobe PATH SYMBOL
//   loader OBJ tracepoint CATEGORY NAME
//   loader OBJ usdt PATH PROVIDER NAME
//
// Loads the object, attaches the one program for the kind (all processes), prints
// "attached" on stdout, waits for SIGINT/SIGTERM and prints "@: N" (the sum over CPUs).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int usage(void) {
  fprintf(stderr, "usage: loader OBJ uprobe PATH SYMBOL | tracepoint CATEGORY NAME | "
                  "usdt PATH PROVIDER NAME\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 5)
    return usage();
  const char *obj_path = argv[1], *kind = argv[2];
  const char *prog_name;
  if (strcmp(kind, "uprobe") == 0 && argc == 5)
    prog_name = "count_uprobe";
  else if (strcmp(kind, "tracepoint") == 0 && argc == 5)
    prog_name = "count_tracepoint";
  else if (strcmp(kind, "usdt") == 0 && argc == 6)
    prog_name = "count_usdt";
  else
    return usage();

  struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
  if (!obj) {
    fprintf(stderr, "loader: cannot open %s\n", obj_path);
    return 1;
  }
  // Load only the program we attach, so nothing else is in the kernel.
  struct bpf_program *prog, *p;
  prog = bpf_object__find_program_by_name(obj, prog_name);
  bpf_object__for_each_program(p, obj) bpf_program__set_autoload(p, p == prog);
  if (!prog || bpf_object__load(obj)) {
    fprintf(stderr, "loader: cannot load %s\n", prog_name);
    return 1;
  }

  struct bpf_link *link = NULL;
  if (strcmp(kind, "uprobe") == 0) {
    LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = argv[4], .retprobe = false);
    link = bpf_program__attach_uprobe_opts(prog, -1, argv[3], 0, &opts);
  } else if (strcmp(kind, "tracepoint") == 0) {
    link = bpf_program__attach_tracepoint(prog, argv[3], argv[4]);
  } else {
    link = bpf_program__attach_usdt(prog, -1, argv[3], argv[4], argv[5], NULL);
  }
  if (!link) {
    fprintf(stderr, "loader: cannot attach %s\n", prog_name);
    return 1;
  }

  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  printf("attached\n");
  fflush(stdout);
  while (!stop)
    pause();

  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0)
    return 1;
  __u64 *values = calloc((size_t)ncpus, sizeof(__u64));
  __u32 key = 0;
  struct bpf_map *map = bpf_object__find_map_by_name(obj, "counter");
  if (!values || !map || bpf_map_lookup_elem(bpf_map__fd(map), &key, values)) {
    fprintf(stderr, "loader: cannot read the counter\n");
    return 1;
  }
  unsigned long long total = 0;
  for (int i = 0; i < ncpus; i++)
    total += values[i];
  printf("@: %llu\n", total);
  bpf_link__destroy(link);
  bpf_object__close(obj);
  free(values);
  return 0;
}
