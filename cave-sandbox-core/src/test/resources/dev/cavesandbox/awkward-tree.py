# A process tree that is awkward to take down without a PID namespace: a process that
# becomes a child subreaper and holds a setsid double-forked daemon, a stopped process, a
# zombie, a vfork-like child and a process that clears its parent-death signal. argv[1]
# is a marker for the test (every process keeps this command line), argv[2] the time
# after which every process exits by itself, argv[3] "exit" or "stay" (whether the
# command then exits or waits for its timeout).
import ctypes
import os
import signal
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
end = float(sys.argv[2])


def linger():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while time.time() < end:
        time.sleep(0.2)
    os._exit(0)


if os.fork() == 0:
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            linger()
        os._exit(0)
    linger()
if os.fork() == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    linger()
if os.fork() == 0:
    os._exit(0)
if os.fork() == 0:
    libc.prctl(PR_SET_PDEATHSIG, 0)
    linger()
pid = os.posix_spawn(sys.executable, [sys.executable, "-c", "import time\nwhile True: time.sleep(1)", sys.argv[1]], os.environ)
print("tree started", flush=True)
if sys.argv[3] == "stay":
    linger()
