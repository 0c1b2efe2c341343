#include "busy_processes.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace bench {

BusyProcesses::BusyProcesses(int n) {
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("BusyProcesses: fork failed");
    if (pid == 0) {
      // the child touches nothing of the parent's state (its threads did not survive the fork),
      // and dies with the parent, however the parent ends
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) ::_exit(0);
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    pids_.push_back(pid);
  }
}

BusyProcesses::~BusyProcesses() {
  for (pid_t pid : pids_) ::kill(pid, SIGKILL);
  for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
}

void BusyProcesses::pause() {
  for (pid_t pid : pids_) ::kill(pid, SIGSTOP);
}

void BusyProcesses::resume() {
  for (pid_t pid : pids_) ::kill(pid, SIGCONT);
}

}  // namespace bench
