# Attempts on a process outside the sandbox (argv[1], a pid of the host: the JVM or a
# victim the test started) by a command of a mechanism without a mount namespace. One line per
# attempt: "<name> ok" when the call succeeded, "<name> <errno name>" when it failed.
# Signals: only to the victim (never the JVM), and signal 0 to the JVM.
import ctypes
import errno
import fcntl
import os
import signal
import sys

libc = ctypes.CDLL(None, use_errno=True)
SYS_PIDFD_SEND_SIGNAL = 424
SYS_PIDFD_OPEN = 434
SYS_TGKILL = 234
F_SETSIG = 10


def attempt(name, action):
    try:
        action()
        print(name, "ok")
    except OSError as error:
        print(name, errno.errorcode.get(error.errno, error.errno))
    sys.stdout.flush()


def checked(result):
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def read(path, size=1):
    with open(path, "rb") as handle:
        handle.read(size)


def open_for_writing(path):
    os.close(os.open(path, os.O_WRONLY))


def sigio(pid, sig):
    reader, writer = os.pipe()
    fcntl.fcntl(reader, fcntl.F_SETOWN, pid)
    if sig is not None:
        fcntl.fcntl(reader, F_SETSIG, sig)
    fcntl.fcntl(reader, fcntl.F_SETFL, fcntl.fcntl(reader, fcntl.F_GETFL) | os.O_ASYNC)
    os.write(writer, b"x")


def pidfd_signal(fd, sig):
    checked(libc.syscall(SYS_PIDFD_SEND_SIGNAL, fd, sig, None, 0))


mode, target = sys.argv[1], int(sys.argv[2])
if mode == "jvm":
    attempt("environ", lambda: read(f"/proc/{target}/environ"))
    attempt("mem", lambda: open_for_writing(f"/proc/{target}/mem"))
    attempt("cwd", lambda: os.listdir(f"/proc/{target}/cwd"))
    attempt("root", lambda: os.listdir(f"/proc/{target}/root/"))
    attempt("fd0", lambda: os.close(os.open(f"/proc/{target}/fd/0", os.O_RDONLY)))
    attempt("maps", lambda: read(f"/proc/{target}/maps"))
    attempt("kill0", lambda: os.kill(target, 0))
else:
    attempt("sigio", lambda: sigio(target, None))
    attempt("setsig", lambda: sigio(target, signal.SIGKILL))
    attempt("pidfd", lambda: pidfd_signal(checked(libc.syscall(SYS_PIDFD_OPEN, target, 0)), signal.SIGTERM))
    attempt("procfd", lambda: pidfd_signal(os.open(f"/proc/{target}", os.O_RDONLY | os.O_DIRECTORY), signal.SIGTERM))
    attempt("tgkill", lambda: checked(libc.syscall(SYS_TGKILL, target, target, signal.SIGTERM)))
    attempt("kill", lambda: os.kill(target, signal.SIGTERM))
