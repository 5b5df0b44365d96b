# A tree that the seccomp mechanism's subreaper cannot stop: its /proc scan reads the state of
# each process's thread-group leader (/proc/PID/status), and the stop rounds skip what
# shows "Z". A process whose leader thread has exited (SYS_exit of the leader alone) while
# another thread runs on shows "Z" and is never sent SIGSTOP. Its running thread
#   - sends SIGCONT to the command's process group every millisecond, so that every scan
#     finds a running process and the stop rounds go on to their bound (200 rounds),
#   - every 0.2 s forks a new process of the same kind and then exits, so that the newest
#     one is never in a list of the tree taken more than 0.2 s earlier,
#   - appends "pid time" to the file "heartbeat" in the working directory (opened once by
#     the command, before the working directory's grant is taken back), and tries to
#     create "planted-by-PID" there (possible again while a later execution in the same
#     directory holds its grant).
# A process holding argv[4] zombies makes each scan of /proc longer.
# argv[1]: a marker for the test (in every process's command line; a process whose leader
# has exited shows it only in /proc/PID/task/TID/cmdline), argv[2]: the time (seconds
# since the epoch) after which every process exits by itself, argv[3]: "stay" (the
# command waits for its timeout) or "exit" (it exits once the tree runs), argv[4]: the
# number of zombies.
import ctypes
import os
import signal
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)
SYS_EXIT = 60  # x86-64; the exit of the calling thread only
end = float(sys.argv[2])
heartbeat = open("heartbeat", "a", buffering=1)


def state_of(pid):
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("State:"):
                    return line.split()[1]
    except OSError:
        return "gone"
    return "?"


def leaderless():
    """In a new process (one thread): run on in a second thread, end the leader."""
    threading.Thread(target=run, daemon=True).start()
    time.sleep(0.01)
    libc.syscall(SYS_EXIT, 0)


def run():
    group = os.getpgid(0)
    next_fork = time.time() + 0.2
    while time.time() < end:
        try:
            os.killpg(group, signal.SIGCONT)
        except OSError:
            pass
        now = time.time()
        if now >= next_fork:
            next_fork = now + 0.2
            try:
                heartbeat.write("%d %.3f\n" % (os.getpid(), now))
            except OSError:
                pass
            # Succeeds whenever the working directory is open to the command user again:
            # during a later execution in it.
            try:
                with open("planted-by-%d" % os.getpid(), "w") as planted:
                    planted.write("written at %.3f\n" % now)
            except OSError:
                pass
            child = os.fork()
            if child == 0:
                leaderless()
                os._exit(0)
            # Hand over once the child's leader is gone ("Z"); a child that was stopped
            # before that stays behind and another is forked.
            deadline = time.time() + 0.5
            while time.time() < deadline and state_of(child) not in ("Z", "gone"):
                os.killpg(group, signal.SIGCONT)
                time.sleep(0.001)
            if state_of(child) == "Z":
                os._exit(0)
        time.sleep(0.001)
    os._exit(0)


def quiet():
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
if os.fork() == 0:
    # The holder of the zombies: it never reaps them.
    quiet()
    for _ in range(int(sys.argv[4])):
        try:
            if os.fork() == 0:
                os._exit(0)
        except OSError:
            break
    while time.time() < end:
        time.sleep(0.2)
    os._exit(0)
if os.fork() == 0:
    quiet()
    leaderless()
    os._exit(0)
time.sleep(0.5)
print("chain started", flush=True)
if sys.argv[3] == "stay":
    while time.time() < end:
        time.sleep(0.2)
