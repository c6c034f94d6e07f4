// config = { max_strlen = 128; stack_mode = perf; ... }: every configuration key bpftrace
// documents (docs/language.md, "Config Variables"), written as in its documentation, as its
// environment variable (BPFTRACE_MAX_STRLEN) or that name without the prefix (MAX_STRLEN).
// Keys that change nothing in rbt are still checked and accepted, each with the reason it has
// no effect, so that bpftrace's scripts run unchanged and a misspelt key is still an error.

#include <cctype>

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

namespace {

enum class ValueKind { Integer, Boolean, Word, String };

// A key rbt accepts and ignores: what its value must look like, and why it changes nothing.
struct IgnoredKey {
  const char *name;
  ValueKind kind;
  const char *words;  // ValueKind::Word: the accepted words, separated by '|'
  const char *why;
};

const IgnoredKey kIgnoredKeys[] = {
    // rbt places any value that does not fit its stack budget in per-CPU scratch memory itself.
    {"on_stack_limit", ValueKind::Integer, nullptr, "values too large for the stack go to scratch"},
    // rbt's frames are sym+offset; it prints no file:line and no inline labels.
    {"show_debug_info", ValueKind::Boolean, nullptr, "stack frames carry no file:line"},
    {"use_blazesym", ValueKind::Boolean, nullptr, "rbt symbolizes with its own ELF reader"},
    {"cache_user_symbols", ValueKind::Word, "PER_PROGRAM|PER_PID|NONE|per_program|per_pid|none",
     "symbols are read per process"},
    {"cpp_demangle", ValueKind::Boolean, nullptr, "symbols print as the ELF names them"},
    {"lazy_symbolication", ValueKind::Boolean, nullptr, "symbols are resolved when printed"},
    // Checked above (check_config): a GPL-compatible value; listed here for the known keys.
    {"license", ValueKind::String, nullptr, "programs are always loaded as GPL"},
    {"log_size", ValueKind::Integer, nullptr, "the verifier log grows as needed (-v)"},
    {"max_bpf_progs", ValueKind::Integer, nullptr, "one program serves each probe"},
    {"max_probes", ValueKind::Integer, nullptr, "no limit on attached probes"},
    {"perf_rb_pages", ValueKind::Integer, nullptr, "the ring buffer has a fixed size"},
    // Features bpftrace marks unstable are stable in rbt.
    {"unstable_tseries", ValueKind::Word, "enable|warn|error", "tseries is stable"},
    {"unstable_import_statement", ValueKind::Word, "enable|warn|error", "import is stable"},
    {"unstable_typeinfo", ValueKind::Word, "enable|warn|error", "nothing unstable"},
    {"unstable_dw_ustack", ValueKind::Word, "enable|warn|error", "nothing unstable"},
};

// bpftrace's old spellings, which it refuses naming the new one.
const std::pair<const char *, const char *> kRenamedKeys[] = {
    {"strlen", "max_strlen"},
    {"no_cpp_demangle", "cpp_demangle"},
    {"cat_bytes_max", "max_cat_bytes"},
    {"map_keys_max", "max_map_keys"},
};

bool word_listed(const std::string &word, const char *words) {
  std::string list = std::string("|") + words + "|";
  return list.find("|" + word + "|") != std::string::npos;
}

std::string spelled(const char *words) {
  std::string s = words;
  for (char &c : s)
    if (c == '|')
      c = ',';
  return s;
}

}  // namespace

void TypeChecker::check_config(const Program &program) {
  ScriptConfig &c = info_.config;
  for (const ConfigItem &item : program.config) {
    auto number = const_int(*item.value);
    // A word may be written bare or quoted (`missing_probes = "warn"`), as bpftrace takes.
    auto *bare = dyn_cast<Builtin>(item.value);
    auto *quoted = dyn_cast<StrLit>(item.value);
    std::optional<std::string> word_text = bare ? std::optional<std::string>(bare->name)
                                           : quoted ? std::optional<std::string>(quoted->value)
                                                    : std::nullopt;
    const std::string *word = word_text ? &*word_text : nullptr;
    auto *lit = dyn_cast<IntLit>(item.value);
    // A boolean may be written true/false or 1/0 (`show_debug_info = 0`).
    bool is_boolean = lit && (lit->is_bool || lit->value <= 1);
    std::string key = item.key;
    for (char &ch : key)
      ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    if (key.rfind("bpftrace_", 0) == 0)
      key = key.substr(9);
    if (key == "max_strlen") {
      if (!number || *number < 1 || *number > kMaxStrlen)
        diags_.error(item.range,
                     "max_strlen must be an integer from 1 to " + std::to_string(kMaxStrlen));
      else {
        c.max_strlen = static_cast<uint32_t>(*number);
        c.max_strlen_set = true;
      }
    } else if (key == "max_cat_bytes") {
      if (!number || *number < 1)
        diags_.error(item.range, "max_cat_bytes must be a positive integer");
      else
        c.max_cat_bytes = static_cast<uint64_t>(*number);
    } else if (key == "str_trunc_trailer") {
      if (!quoted)
        diags_.error(item.range, "str_trunc_trailer must be a string");
      else
        c.str_trunc_trailer = quoted->value;
    } else if (key == "max_map_keys") {
      // A BPF map's max_entries is 32 bits: a larger number must not wrap (2^32+1 to 1).
      if (!number || *number < 1 || static_cast<uint64_t>(*number) > UINT32_MAX)
        diags_.error(item.range, "max_map_keys must be an integer from 1 to 4294967295");
      else
        c.max_map_keys = static_cast<uint64_t>(*number);
    } else if (key == "print_maps_on_exit") {
      if (!is_boolean)
        diags_.error(item.range, "print_maps_on_exit must be true or false");
      else
        c.print_maps_on_exit = lit->value != 0;
    } else if (key == "stack_mode") {
      if (!word || (*word != "bpftrace" && *word != "perf" && *word != "raw"))
        diags_.error(item.range, "stack_mode must be bpftrace, perf or raw");
      else
        c.stack_mode = *word == "perf" ? StackMode::Perf
                       : *word == "raw" ? StackMode::Raw
                                        : StackMode::Bpftrace;
    } else if (key == "missing_probes") {
      if (!word || (*word != "error" && *word != "warn" && *word != "ignore"))
        diags_.error(item.range, "missing_probes must be error, warn or ignore");
      else
        c.missing_probes = *word == "warn"     ? MissingProbes::Warn
                           : *word == "ignore" ? MissingProbes::Ignore
                                                    : MissingProbes::Error;
    } else if (key == "license") {
      // The licenses the kernel counts as GPL-compatible, which BPF tracing helpers require;
      // bpftrace's list and words. rbt loads every program as GPL, which any of them allows.
      static const char *kLicenses[] = {"Dual MIT/GPL", "Dual BSD/GPL", "Dual MPL/GPL",
                                        "GPL and additional rights", "GPL v2", "GPL"};
      auto *text = dyn_cast<StrLit>(item.value);
      bool known = false;
      for (const char *l : kLicenses)
        known = known || (text && text->value == l);
      if (!known)
        diags_.error(item.range, "Invalid value for license. Found: " +
                                     (text ? text->value : std::string("a non-string")) +
                                     ". Valid values: Dual MIT/GPL, Dual BSD/GPL, Dual MPL/GPL, "
                                     "GPL and additional rights, GPL v2, GPL");
    } else {
      check_ignored_config(item, key);
    }
  }
  const ConfigOverrides &env = env_.config_env;
  if (env.max_strlen) {
    c.max_strlen = *env.max_strlen;
    c.max_strlen_set = true;
  }
  if (env.str_trunc_trailer)
    c.str_trunc_trailer = *env.str_trunc_trailer;
  if (env.max_cat_bytes)
    c.max_cat_bytes = *env.max_cat_bytes;
  if (env.max_map_keys)
    c.max_map_keys = *env.max_map_keys;
  if (env.print_maps_on_exit)
    c.print_maps_on_exit = *env.print_maps_on_exit;
  if (env.stack_mode)
    c.stack_mode = *env.stack_mode;
  c.dummy_ts_map = env.dummy_ts_map;
}

// A key other than those above: one rbt accepts without effect (its value still checked), a
// renamed one, or an unknown one.
void TypeChecker::check_ignored_config(const ConfigItem &item, const std::string &key) {
  for (auto [old_name, new_name] : kRenamedKeys) {
    if (key == old_name) {
      diags_.error(item.range, "config key '" + item.key + "' was renamed to '" + new_name + "'");
      return;
    }
  }
  for (const IgnoredKey &k : kIgnoredKeys) {
    if (key != k.name)
      continue;
    auto *lit = dyn_cast<IntLit>(item.value);
    auto *word = dyn_cast<Builtin>(item.value);
    auto *quoted = dyn_cast<StrLit>(item.value);
    bool ok = false;
    std::string expected;
    switch (k.kind) {
    case ValueKind::Integer:
      ok = lit && !lit->is_bool;
      expected = "a non-negative integer";
      break;
    case ValueKind::Boolean:
      ok = lit && (lit->is_bool || lit->value <= 1);
      expected = "true or false";
      break;
    case ValueKind::Word:
      ok = (word && word_listed(word->name, k.words)) ||
           (quoted && word_listed(quoted->value, k.words)) ||
           (lit && lit->is_bool && word_listed("enable", k.words));  // unstable_*: true/false
      expected = "one of " + spelled(k.words);
      break;
    case ValueKind::String:
      ok = dyn_cast<StrLit>(item.value) != nullptr;
      expected = "a string";
      break;
    }
    if (!ok)
      diags_.error(item.range, std::string(k.name) + " must be " + expected);
    return;
  }
  std::string known = "max_strlen, max_map_keys, print_maps_on_exit, stack_mode, missing_probes, "
                      "str_trunc_trailer, max_cat_bytes";
  for (const IgnoredKey &k : kIgnoredKeys)
    known += std::string(", ") + k.name;
  diags_.error(item.range, "unknown config key '" + item.key + "' (" + known + ")");
}

// `config.max_strlen`: the configuration in effect (the script's block, then the environment)
// as a record: the keys rbt honours, and cpp_demangle (false: rbt prints symbols as the ELF
// names them).
Type config_record_type() {
  return Type::record_tuple({Type::integer(64, false), Type::integer(64, false), Type::boolean(),
                             Type::string(16), Type::boolean()},
                            {"max_strlen", "max_map_keys", "print_maps_on_exit", "stack_mode",
                             "cpp_demangle"});
}

const char *stack_mode_name(StackMode mode) {
  return mode == StackMode::Perf      ? "perf"
         : mode == StackMode::Raw     ? "raw"
         : mode == StackMode::BuildId ? "build_id"
                                      : "bpftrace";
}

Type TypeChecker::check_config_record(const Builtin &) { return config_record_type(); }

}  // namespace rbt::sema
