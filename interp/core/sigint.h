// Ctrl-C in the `msl` command (msl_main.cpp, repl.cpp): SIGINT raises
// KeyboardInterrupt in the running program, also while the program waits
// in a blocking system call.
//
// The handler only calls Interp::request_interrupt() (atomic stores, which
// are async-signal-safe); running code raises KeyboardInterrupt at its next
// loop iteration or call (Interp::poll). A program blocked in the kernel —
// input() with nothing typed, open() of a FIFO that has no writer, a read
// from a quiet pipe — reaches no such point, so the signal must also end
// the system call:
//   1. the handler is installed without SA_RESTART: the interrupted call
//      fails with EINTR instead of resuming;
//   2. the signal must interrupt the interpreter's thread. The `msl`
//      command blocks SIGINT in its main thread (which only waits for the
//      interpreter's thread), and the handler, when the kernel picks another
//      thread (a kernel or data set worker), forwards the signal to the
//      interpreter's thread with pthread_kill;
//   3. every blocking call site retries on EINTR after Interp::poll(),
//      which raises KeyboardInterrupt when one is pending (any other signal
//      just resumes the call): input() and sys.stdin (read_stdin_line in
//      builtins.h), open() and file reads (file_object.cpp), the REPL's
//      plain line reader.
// A Ctrl-C that arrives after a call site's last check but before its
// system call starts cannot end that call; it stays pending, and the next
// Ctrl-C ends the call and raises it, so a second Ctrl-C is never lost.
//
// Embedding hosts get none of this (a library must not take over the
// process's signals): VM::interrupt() stops running code, not a blocking
// system call.
#pragma once

#include <pthread.h>
#include <signal.h>

namespace msl {

class Interp;

// Routes SIGINT to `I`, which runs on the calling thread, until destroyed;
// then restores the previous handler, target and signal mask. Scopes nest
// (the REPL inside the `msl` command).
class SigintScope {
 public:
  explicit SigintScope(Interp& I);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  struct sigaction old_action_ {};
  sigset_t old_mask_;
  Interp* old_interp_ = nullptr;
  pthread_t old_thread_{};
};

}  // namespace msl
