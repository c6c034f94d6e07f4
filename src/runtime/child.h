#pragma once
// The command of -c: started stopped (before exec) so probes are attached before it runs its
// first instruction, then released.

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

// Splits a command line the way a POSIX shell does for words: quotes and backslashes, no
// expansion. Returns an error for an unterminated quote.
Result<std::vector<std::string>> split_command(const std::string &command);

class ChildProcess {
public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  // Forks and waits in the child until release(); the program is found on PATH.
  Status spawn(const std::string &command);
  // Lets the child exec; fails if exec failed (missing program, no permission).
  Status release();
  pid_t pid() const { return pid_; }
  // Reaps the child if it has exited; true once it has.
  bool reap();
  bool exited() const { return exited_; }
  int exit_status() const { return status_; }
  void terminate();  // SIGTERM and reap, if still running
  // Called once the command is about to exit, while its memory is still there (set before
  // release()).
  void on_exit(std::function<void(pid_t)> callback) { on_exit_ = std::move(callback); }
  // The file the child will exec: its program, found on PATH as execvp finds it ("" if none).
  std::string executable() const;

private:
  pid_t pid_ = -1;
  int go_fd_ = -1;     // parent writes a byte here to let the child exec
  int error_fd_ = -1;  // the child writes errno here if exec fails; closed by a good exec
  bool exited_ = false;
  int status_ = 0;
  std::string program_;
  std::function<void(pid_t)> on_exit_;
};

}  // namespace rbt::runtime
