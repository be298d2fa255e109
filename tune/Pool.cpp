//===- Pool.cpp - Child processes with a time limit -----------------------===//

#include "tune/Pool.h"

#include "llvm/Support/Program.h"

#include <chrono>
#include <csignal>
#include <optional>
#include <thread>

namespace moegen::tune {

void runChildren(llvm::StringRef program, llvm::ArrayRef<ChildJob> jobs, unsigned parallel,
                 unsigned timeoutSeconds,
                 const std::function<void(size_t, const ChildResult &)> &done) {
  using Clock = std::chrono::steady_clock;
  struct Running {
    size_t index;
    llvm::sys::ProcessInfo info;
    Clock::time_point start;
  };
  std::vector<Running> running;
  size_t next = 0;
  parallel = std::max(1u, parallel);
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && running.size() < parallel) {
      const ChildJob &job = jobs[next];
      std::vector<llvm::StringRef> args(job.args.begin(), job.args.end());
      std::optional<llvm::StringRef> redirects[] = {
          llvm::StringRef(""), llvm::StringRef(job.stdoutPath), llvm::StringRef(job.stderrPath)};
      std::string err;
      bool failed = false;
      llvm::sys::ProcessInfo pi =
          llvm::sys::ExecuteNoWait(program, args, std::nullopt, redirects, 0, &err, &failed);
      if (failed || pi.Pid == llvm::sys::ProcessInfo::InvalidPid) {
        ChildResult r;
        r.error = "cannot start " + program.str() + ": " + err;
        done(next++, r);
        continue;
      }
      running.push_back({next++, pi, Clock::now()});
    }
    bool progressed = false;
    for (size_t i = 0; i < running.size();) {
      Running &r = running[i];
      std::string err;
      bool late = timeoutSeconds && Clock::now() - r.start > std::chrono::seconds(timeoutSeconds);
      // Past the limit the child is killed and reaped (LLVM's own timeout
      // reaps any child, which may be another job's).
      if (late)
        ::kill(r.info.Pid, SIGKILL);
      llvm::sys::ProcessInfo w = late
                                     ? llvm::sys::Wait(r.info, std::nullopt, &err)
                                     : llvm::sys::Wait(r.info, 0u, &err, nullptr, /*Polling=*/true);
      if (w.Pid == 0 && !late) {
        ++i;
        continue;
      }
      ChildResult res;
      if (w.ReturnCode >= 0 && err.empty()) {
        res.exited = true;
        res.exitCode = w.ReturnCode;
      } else {
        res.timedOut = late;
        res.error = late ? "killed after " + std::to_string(timeoutSeconds) + " s"
                         : (err.empty() ? "exit status " + std::to_string(w.ReturnCode) : err);
      }
      size_t index = r.index;
      running.erase(running.begin() + i);
      done(index, res);
      progressed = true;
    }
    if (!progressed && !running.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace moegen::tune
