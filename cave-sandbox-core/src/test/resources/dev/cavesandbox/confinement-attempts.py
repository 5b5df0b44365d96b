# Run by LauncherConfinementTests inside the sandbox ("isolated") and outside it
# ("control"): each attempt an ordinary program could make to leave the sandbox's
# confinement, one line each, NAME=OK or NAME=ERRNO. Nothing here connects a socket,
# and outside the sandbox nothing touches another process than the child it forks.
import ctypes, errno, os, signal, socket, subprocess, sys, time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ISOLATED = sys.argv[1] == "isolated"
buffer = ctypes.create_string_buffer(b"cave-sandbox", 16)


def call(number, *arguments):
    result = libc.syscall(ctypes.c_long(number), *arguments)
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def report(name, attempt):
    try:
        result = attempt()
        if isinstance(result, int) and result > 2:
            os.close(result)
        print(name + "=OK", flush=True)
    except OSError as ex:
        print(name + "=" + errno.errorcode.get(ex.errno, str(ex.errno)), flush=True)


def create_socket(family, kind):
    # Created and closed, never connected.
    socket.socket(family, kind, 0).close()


def io_uring_setup():
    return call(425, ctypes.c_uint(1), ctypes.byref(ctypes.create_string_buffer(120)))


def ptrace_attach(pid):
    call(101, ctypes.c_long(16), ctypes.c_long(pid), None, None)
    os.waitpid(pid, 0x40000000)
    call(101, ctypes.c_long(17), ctypes.c_long(pid), None, None)


class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


def process_vm_readv(pid):
    local = ctypes.create_string_buffer(16)
    mine = iovec(ctypes.cast(local, ctypes.c_void_p), 12)
    theirs = iovec(ctypes.cast(buffer, ctypes.c_void_p), 12)
    call(310, ctypes.c_long(pid), ctypes.byref(mine), ctypes.c_ulong(1), ctypes.byref(theirs), ctypes.c_ulong(1),
         ctypes.c_ulong(0))
    if local.raw[:12] != b"cave-sandbox":
        raise OSError(errno.EIO, "read something else")


def open_mem(pid):
    return os.open("/proc/%d/mem" % pid, os.O_RDWR)


def keyctl_session():
    call(250, ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(0))


def add_key():
    # Into this process's own keyring, which ends with it.
    call(248, b"user", b"cave-sandbox-attempt", b"x", ctypes.c_size_t(1), ctypes.c_long(-2))


def bpf_map():
    attributes = ctypes.create_string_buffer(64)
    for offset, value in ((0, 2), (4, 4), (8, 4), (12, 1)):
        ctypes.c_uint32.from_buffer(attributes, offset).value = value
    return call(321, ctypes.c_long(0), attributes, ctypes.c_uint(64))


def perf_event_open():
    attributes = ctypes.create_string_buffer(128)
    ctypes.c_uint32.from_buffer(attributes, 0).value = 1  # PERF_TYPE_SOFTWARE
    ctypes.c_uint32.from_buffer(attributes, 4).value = 128
    ctypes.c_uint64.from_buffer(attributes, 8).value = 9  # PERF_COUNT_SW_DUMMY
    ctypes.c_uint64.from_buffer(attributes, 40).value = (1 << 5) | (1 << 6)  # exclude kernel, hypervisor
    return call(298, attributes, ctypes.c_long(0), ctypes.c_long(-1), ctypes.c_long(-1), ctypes.c_ulong(0))


def userfaultfd():
    # UFFD_USER_MODE_ONLY: allowed without privileges where the sysctl forbids the rest.
    return call(323, ctypes.c_long(os.O_CLOEXEC | 1))


def unshare_user():
    process = subprocess.run(["unshare", "-U", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    if process.returncode != 0:
        message = process.stderr.decode()
        raise OSError(errno.EPERM if "Operation not permitted" in message else errno.EIO, message)


def mode(name):
    return oct(os.stat(name).st_mode & 0o7777)


for name in ("plain", "created"):
    if os.path.exists(name):
        os.unlink(name)

report("socket(AF_VSOCK)", lambda: create_socket(socket.AF_VSOCK, socket.SOCK_STREAM))
report("socket(AF_NETLINK)", lambda: create_socket(socket.AF_NETLINK, socket.SOCK_RAW))
report("socket(AF_PACKET)", lambda: create_socket(socket.AF_PACKET, socket.SOCK_RAW))
report("socket(AF_INET)", lambda: create_socket(socket.AF_INET, socket.SOCK_STREAM))
report("io_uring_setup", io_uring_setup)
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
try:
    report("ptrace(child)", lambda: ptrace_attach(child))
    report("process_vm_readv(child)", lambda: process_vm_readv(child))
    report("open(/proc/child/mem)", lambda: open_mem(child))
    if ISOLATED:
        report("ptrace(1)", lambda: ptrace_attach(1))
        report("ptrace(parent)", lambda: ptrace_attach(os.getppid()))
        report("process_vm_readv(1)", lambda: process_vm_readv(1))
        report("open(/proc/1/mem)", lambda: open_mem(1))
finally:
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
report("keyctl", keyctl_session)
report("add_key", add_key)
report("bpf", bpf_map)
report("perf_event_open", perf_event_open)
report("userfaultfd", userfaultfd)
report("unshare -U", unshare_user)
with open("plain", "w") as plain:
    plain.write("plain\n")
os.chmod("plain", 0o755)
report("chmod(u+s)", lambda: os.chmod("plain", 0o4755))
print("mode(u+s)=" + mode("plain"))
os.chmod("plain", 0o755)
report("chmod(g+s)", lambda: os.chmod("plain", 0o2755))
print("mode(g+s)=" + mode("plain"))
report("open(O_CREAT, 04755)", lambda: os.open("created", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o4755))
print("created=" + (mode("created") if os.path.exists("created") else "absent"), flush=True)
