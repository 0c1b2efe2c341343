// Contention for the cases that measure a busy machine: processes that spin on the CPUs as other
// users' jobs would. They compete with both frameworks alike.
#pragma once
#include <sys/types.h>

#include <vector>

namespace bench {

class BusyProcesses {
 public:
  // n forked processes, spinning until paused or destroyed.
  explicit BusyProcesses(int n);
  ~BusyProcesses();  // kills and reaps them
  BusyProcesses(const BusyProcesses&) = delete;
  BusyProcesses& operator=(const BusyProcesses&) = delete;
  void pause();   // SIGSTOP: the machine is quiet again
  void resume();  // SIGCONT

 private:
  std::vector<pid_t> pids_;
};

}  // namespace bench
