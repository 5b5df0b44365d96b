# Routes by which a command could change another process of its own uid (argv[1], a
# victim the test started as the command user) without a signal: scheduling, priorities,
# limits, memory advice, /proc files of the victim. One line per attempt: "<name> ok"
# when the call succeeded, "<name> <errno name>" when it failed. Every attempt that
# succeeds changes only scheduling hints or attributes that the test reads back; nothing
# kills or stops the victim.
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
# x86-64 system call numbers.
SYS_SCHED_SETPARAM = 142
SYS_SCHED_SETSCHEDULER = 144
SYS_SCHED_SETAFFINITY = 203
SYS_SETPRIORITY = 141
SYS_PRLIMIT64 = 302
SYS_IOPRIO_SET = 251
SYS_KCMP = 312
SYS_SCHED_SETATTR = 314
SYS_GET_ROBUST_LIST = 274
SYS_MIGRATE_PAGES = 256
SYS_MOVE_PAGES = 279
SYS_PIDFD_OPEN = 434
SYS_PROCESS_MADVISE = 440
SYS_SETPGID = 109
SCHED_IDLE = 5
MADV_COLD = 20
KCMP_VM = 1
IOPRIO_CLASS_IDLE = 3


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


def write(path, data):
    with open(path, "w") as handle:
        handle.write(data)


victim = int(sys.argv[1])
param = ctypes.c_int(0)
attr = (ctypes.c_uint32 * 14)()
attr[0] = 56  # size
attr[1] = SCHED_IDLE  # sched_policy
iovec = (ctypes.c_uint64 * 2)(0x10000, 4096)
robust_head = ctypes.c_void_p()
robust_len = ctypes.c_size_t()
mask = ctypes.c_uint64(1)

attempt("sched_setscheduler", lambda: checked(libc.syscall(SYS_SCHED_SETSCHEDULER, victim, SCHED_IDLE, ctypes.byref(param))))
attempt("sched_setparam", lambda: checked(libc.syscall(SYS_SCHED_SETPARAM, victim, ctypes.byref(param))))
attempt("sched_setattr", lambda: checked(libc.syscall(SYS_SCHED_SETATTR, victim, ctypes.byref(attr), 0)))
attempt("setpriority_process", lambda: checked(libc.syscall(SYS_SETPRIORITY, 0, victim, 19)))
attempt("setpriority_pgrp", lambda: checked(libc.syscall(SYS_SETPRIORITY, 1, victim, 19)))
attempt("setpriority_user", lambda: checked(libc.syscall(SYS_SETPRIORITY, 2, os.getuid(), 19)))
attempt("prlimit64", lambda: checked(libc.syscall(SYS_PRLIMIT64, victim, 7, None, None)))
attempt("ioprio_set_process", lambda: checked(libc.syscall(SYS_IOPRIO_SET, 1, victim, IOPRIO_CLASS_IDLE << 13)))
attempt("ioprio_set_user", lambda: checked(libc.syscall(SYS_IOPRIO_SET, 3, os.getuid(), IOPRIO_CLASS_IDLE << 13)))
attempt("kcmp", lambda: checked(libc.syscall(SYS_KCMP, os.getpid(), victim, KCMP_VM, 0, 0)))
attempt("get_robust_list", lambda: checked(libc.syscall(SYS_GET_ROBUST_LIST, victim, ctypes.byref(robust_head), ctypes.byref(robust_len))))
attempt("migrate_pages", lambda: checked(libc.syscall(SYS_MIGRATE_PAGES, victim, 64, ctypes.byref(mask), ctypes.byref(mask))))
attempt("move_pages", lambda: checked(libc.syscall(SYS_MOVE_PAGES, victim, 0, None, None, None, 0)))
attempt("setpgid", lambda: checked(libc.syscall(SYS_SETPGID, victim, victim)))


def madvise():
    pidfd = checked(libc.syscall(SYS_PIDFD_OPEN, victim, 0))
    checked(libc.syscall(SYS_PROCESS_MADVISE, pidfd, ctypes.byref(iovec), 1, MADV_COLD, 0))


attempt("process_madvise", madvise)
for name, data in (("oom_score_adj", "1000"), ("timerslack_ns", "100000000"), ("comm", "renamed"),
                   ("clear_refs", "1"), ("autogroup", "19"), ("sched", "0"), ("loginuid", "1")):
    attempt("proc_" + name, lambda: write("/proc/%d/%s" % (victim, name), data))
attempt("sched_setaffinity", lambda: checked(libc.syscall(SYS_SCHED_SETAFFINITY, victim, 8, ctypes.byref(mask))))
