#include "child.h"
#include "symbols/library_resolver.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rbt::runtime {

Result<std::vector<std::string>> split_command(const std::string &command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < command.size(); i++) {
    char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < command.size() &&
               strchr("\"\\$`", command[i + 1]))
        word += command[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (isspace(static_cast<unsigned char>(c))) {
      if (in_word)
        words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote)
    return make_error("parsing the command '" + command + "'", "unterminated quote");
  if (in_word)
    words.push_back(std::move(word));
  if (words.empty())
    return make_error("parsing the command", "the command is empty");
  return words;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_)
    terminate();
  if (go_fd_ >= 0)
    close(go_fd_);
  if (error_fd_ >= 0)
    close(error_fd_);
}

std::string ChildProcess::executable() const {
  if (program_.empty() || program_.find('/') != std::string::npos)
    return program_;
  return find_program(program_).value_or("");
}

Status ChildProcess::spawn(const std::string &command) {
  auto words = split_command(command);
  if (!words)
    return words.error();
  program_ = (*words)[0];
  int go[2], error[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(error, O_CLOEXEC) != 0)
    return make_error("starting '" + command + "'", strerror(errno));
  std::vector<char *> argv;
  for (auto &w : *words)
    argv.push_back(w.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0)
    return make_error("starting '" + command + "'", strerror(errno));
  if (pid == 0) {
    // The child: undo rbt's signal blocking, wait for the go byte, then become the command.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    close(go[1]);
    close(error[0]);
    char byte;
    if (read(go[0], &byte, 1) != 1)
      _exit(127);  // rbt gave up (attach failed): never run the command
    execvp(argv[0], argv.data());
    int err = errno;
    if (write(error[1], &err, sizeof(err)) < 0) {
    }
    _exit(127);
  }
  close(go[0]);
  close(error[1]);
  pid_ = pid;
  go_fd_ = go[1];
  error_fd_ = error[0];
  return Ok{};
}

Status ChildProcess::release() {
  // Trace only the exit of the command (PTRACE_O_TRACEEXIT): rbt gets one look at its memory
  // map before it is torn down, so its user stacks symbolize after it has gone. If ptrace is
  // not allowed (nested tracing, a restrictive Yama policy) stacks just print as addresses.
  if (on_exit_)
    ptrace(PTRACE_SEIZE, pid_, nullptr, reinterpret_cast<void *>(PTRACE_O_TRACEEXIT));
  char byte = 1;
  if (write(go_fd_, &byte, 1) != 1)
    return make_error("starting " + program_, strerror(errno));
  close(go_fd_);
  go_fd_ = -1;
  int err = 0;
  ssize_t n = read(error_fd_, &err, sizeof(err));
  close(error_fd_);
  error_fd_ = -1;
  if (n == sizeof(err)) {
    reap();
    return make_error("running " + program_, strerror(err),
                      err == ENOENT ? "check the program's name or give its full path" : "", err);
  }
  return Ok{};
}

bool ChildProcess::reap() {
  if (pid_ <= 0 || exited_)
    return exited_;
  int status;
  while (waitpid(pid_, &status, WNOHANG | __WALL) == pid_) {
    if (!WIFSTOPPED(status)) {
      exited_ = true;
      status_ = status;
      break;
    }
    // A ptrace stop: the exit stop lets us see the process's memory one last time; any other
    // stop is a signal on its way to the child, which we pass on untouched.
    int sig = WSTOPSIG(status);
    if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
      if (on_exit_)
        on_exit_(pid_);
      sig = 0;
    } else if (status >> 16 == PTRACE_EVENT_STOP) {
      sig = 0;
    }
    ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void *>(static_cast<intptr_t>(sig)));
  }
  return exited_;
}

void ChildProcess::terminate() {
  if (pid_ <= 0 || exited_)
    return;
  if (go_fd_ >= 0) {  // never released: closing the pipe makes it exit without running
    close(go_fd_);
    go_fd_ = -1;
  } else {
    kill(pid_, SIGTERM);
  }
  while (!reap()) {
    siginfo_t info;  // block until the child changes state, then let reap() handle it
    if (waitid(P_PID, pid_, &info, WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0)
      break;
  }
}

}  // namespace rbt::runtime
