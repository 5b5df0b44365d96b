# A process tree that a subreaper killing its children one generation at a time cannot
# finish in time: the command leaves one process behind, and each process of the chain
# forks a new one the moment its parent dies (PR_SET_PDEATHSIG), so there is a live process
# one generation below the one being killed; argv[3] zombies, which the subreaper inherits
# when the command exits, make each of its rounds (a scan of /proc per zombie reaped)
# slower than the chain's fork. argv[1] is a marker for the test, argv[2] the
# time (seconds since the epoch) after which every process of the chain exits by itself,
# so that nothing outlives a failed test for long.
import ctypes
import os
import signal
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1
end = float(sys.argv[2])


def spare():
    # The parent is the pid before the fork: it may be gone by the time the child runs.
    parent = os.getpid()
    if os.fork() != 0:
        return
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGUSR1)
    while time.time() < end:
        # Woken by the parent-death signal, or by the timeout when the parent died before
        # the prctl above.
        signal.sigtimedwait([signal.SIGUSR1], 0.05)
        if os.getppid() != parent:
            forker = os.getpid()
            if os.fork() == 0:
                parent = forker
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGUSR1)
            else:
                parent = os.getppid()
    os._exit(0)


# The executor's SIGTERM reaches every process it listed at the timeout: the chain of that
# moment would die with it.
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
for zombie in range(int(sys.argv[3])):
    if os.fork() == 0:
        os._exit(0)
spare()
print("spare forked", flush=True)
