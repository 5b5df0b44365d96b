# A process tree that is awkward to take down without a PID namespace: a process that
# becomes a child subreaper and holds a double-forked daemon, a stopped process, a
# zombie, a vfork-like child and a process that clears its parent-death signal. argv[1]
# is a marker for the test (every process keeps this command line), argv[2] the time
# after which every process exits by itself, argv[3] "exit" or "stay" (whether the
# command then exits or waits for its timeout).
# The daemon's parent attempts a session of its own (setsid(2)) before the second fork,
# and the tree prints "daemon: own session" or "daemon: setsid refused" before "tree
# started": a mechanism without a PID namespace (seccomp) refuses it with EPERM, so that the
# command's process group stays its whole tree. The daemon runs either way.
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


session_read, session_write = os.pipe()
if os.fork() == 0:
    os.close(session_read)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.fork() == 0:
        try:
            os.setsid()
            os.write(session_write, b"daemon: own session\n")
        except PermissionError:
            os.write(session_write, b"daemon: setsid refused\n")
        os.close(session_write)
        if os.fork() == 0:
            linger()
        os._exit(0)
    os.close(session_write)
    linger()
os.close(session_write)
# One short write, or nothing (EOF) if the daemon's parent failed.
session = os.read(session_read, 100).decode()
os.close(session_read)
if os.fork() == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    linger()
if os.fork() == 0:
    os._exit(0)
if os.fork() == 0:
    libc.prctl(PR_SET_PDEATHSIG, 0)
    linger()
pid = os.posix_spawn(sys.executable, [sys.executable, "-c", "import time\nwhile True: time.sleep(1)", sys.argv[1]], os.environ)
print(session + "tree started", flush=True)
if sys.argv[3] == "stay":
    linger()
