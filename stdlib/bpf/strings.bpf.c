// String and map helpers too loopy to write as IRBuilder glue: strlen, strncmp, strcontains,
// len(@m). Each is a static subprogram after linking, verified with its caller's constant
// sizes, so its loops are bounded.

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

// Length of the NUL-terminated string in a buffer of `size` bytes.
__u64 rbt_strlen(const char *s, __u64 size) {
  __u64 n = 0;
  for (__u64 i = 0; i < size && i < 4096; i++) {
    if (!s[i])
      break;
    n++;
  }
  return n;
}

// 0 when the first `n` characters of a and b match (stopping at a shared NUL), else 1.
__u64 rbt_strncmp(const char *a, __u64 a_size, const char *b, __u64 b_size, __u64 n) {
  for (__u64 i = 0; i < n && i < 4096; i++) {
    char ca = i < a_size ? a[i] : 0, cb = i < b_size ? b[i] : 0;
    if (ca != cb)
      return 1;
    if (!ca)
      return 0;
  }
  return 0;
}

// 1 when `needle` occurs in `haystack` (both NUL-terminated within their sizes).
__u64 rbt_strcontains(const char *haystack, __u64 h_size, const char *needle, __u64 n_size) {
  for (__u64 start = 0; start < h_size && start < 1024; start++) {
    __u64 i = 0;
    for (; i < n_size && i < 1024; i++) {
      if (!needle[i])
        return 1;
      if (start + i >= h_size || haystack[start + i] != needle[i])
        break;
    }
    if (i == n_size)
      return 1;
    if (!haystack[start])
      return 0;
  }
  return 0;
}

static long count_entry(void *map, const void *key, void *value, void *ctx) {
  (*(__u64 *)ctx)++;
  return 0;
}

// Number of entries of a hash map (len(@m)).
__u64 rbt_map_len(void *map) {
  __u64 n = 0;
  bpf_for_each_map_elem(map, count_entry, &n, 0);
  return n;
}
