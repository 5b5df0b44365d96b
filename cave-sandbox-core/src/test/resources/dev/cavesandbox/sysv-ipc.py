# System V shared memory and POSIX message queues, which no namespace separates on the
# seccomp mechanism and which outlive the processes that made them. argv[1]: "plant" (create a
# segment and a queue named after argv[2] holding argv[3]), "read" (print what they
# hold), or "remove" (remove both). argv[2]: a key, a decimal number. One line per step:
# "<step> ok [data]" or "<step> <errno name>".
import ctypes
import errno
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.mq_open.restype = ctypes.c_int
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
IPC_CREAT = 0o1000
IPC_RMID = 0
O_RDONLY = 0
O_WRONLY = 1
O_CREAT = 0o100
O_NONBLOCK = 0o4000
SIZE = 4096
mode, key = sys.argv[1], int(sys.argv[2])
queue = ("/cave-%d" % key).encode()


def report(step, result, data=""):
    if result < 0:
        error = ctypes.get_errno()
        print(step, errno.errorcode.get(error, error))
    else:
        print(step, "ok", data)
    sys.stdout.flush()


if mode == "plant":
    text = sys.argv[3].encode()
    segment = libc.shmget(key, SIZE, IPC_CREAT | 0o600)
    report("shmget", segment)
    if segment >= 0:
        address = libc.shmat(segment, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(address, text, len(text))
            libc.shmdt(ctypes.c_void_p(address))
            print("shm written", flush=True)
    descriptor = libc.mq_open(queue, O_WRONLY | O_CREAT | O_NONBLOCK, 0o600, None)
    report("mq_open", descriptor)
    if descriptor >= 0:
        report("mq_send", libc.mq_send(descriptor, text, len(text), 0))
elif mode == "read":
    segment = libc.shmget(key, 0, 0)
    report("shmget", segment)
    if segment >= 0:
        address = libc.shmat(segment, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            print("shm read", ctypes.string_at(address).decode(errors="replace"), flush=True)
    descriptor = libc.mq_open(queue, O_RDONLY | O_NONBLOCK, 0, None)
    report("mq_open", descriptor)
    if descriptor >= 0:
        buffer = ctypes.create_string_buffer(8192)
        length = libc.mq_receive(descriptor, buffer, 8192, None)
        report("mq_receive", length, buffer.raw[:max(length, 0)].decode(errors="replace"))
elif mode == "remove":
    segment = libc.shmget(key, 0, 0)
    report("shmget", segment)
    if segment >= 0:
        report("shmctl(IPC_RMID)", libc.shmctl(segment, IPC_RMID, None))
    report("mq_unlink", libc.mq_unlink(queue))
