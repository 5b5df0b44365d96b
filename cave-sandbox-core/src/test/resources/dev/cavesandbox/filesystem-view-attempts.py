# Attempts to read host files outside the filesystem view (FilesystemViewBreakInTests).
# argv: MARKER SECRET... ; prints "fd N=TARGET" for each descriptor open at start, then
# one "NAME=RESULT" line per attempt: "leak" when the marker was read, otherwise the
# errno name of the refusal. Never writes anything but a link in the working directory.
import ctypes, errno, os, sys

libc = ctypes.CDLL(None, use_errno=True)


class Handle(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]


if sys.argv[1] == "handle":
    # Outside the sandbox: print the file handle of argv[2] as TYPE:HEX.
    handle, mount = Handle(), ctypes.c_int()
    handle.bytes = 128
    if libc.name_to_handle_at(-100, sys.argv[2].encode(), ctypes.byref(handle), ctypes.byref(mount), 0) != 0:
        sys.exit("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
    print("%d:%s" % (handle.type, bytes(handle.f[:handle.bytes]).hex()))
    sys.exit(0)

fds = os.listdir("/proc/self/fd")
for fd in sorted(fds, key=int):
    try:
        print("fd %s=%s" % (fd, os.readlink("/proc/self/fd/" + fd)), flush=True)
    except OSError:
        pass

marker, secrets = sys.argv[1].encode(), sys.argv[2:]
me = os.readlink("/proc/self")


def read(path):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def attempt(name, reader):
    try:
        result = "leak" if marker in reader() else "no-marker"
    except OSError as ex:
        result = errno.errorcode.get(ex.errno, str(ex.errno))
    print(name + "=" + result, flush=True)


def first(paths):
    last = OSError(errno.ENOENT, "none")
    for path in paths:
        try:
            data = read(path)
            if marker in data:
                return data
        except OSError as ex:
            last = ex
    raise last


def entries(directory):
    try:
        return os.listdir(directory)
    except OSError:
        return []


def other_processes():
    """/proc/PID/root, cwd, fd/* and map_files/* of every other process in sight."""
    for pid in entries("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        base = "/proc/" + pid
        paths = [base + "/root" + s for s in secrets]
        paths += [base + "/cwd/../../../../../../../../.." + s for s in secrets]
        paths += [base + "/fd/" + fd for fd in entries(base + "/fd")]
        paths += [base + "/map_files/" + m for m in entries(base + "/map_files")]
        try:
            return first(paths)
        except OSError:
            pass
    raise OSError(errno.ENOENT, "nothing")


def by_handle():
    """open_by_handle_at(2) of the first secret's handle (taken outside, CAVE_HANDLE),
    against the working directory, which lies on the same file system."""
    kind, data = os.environ["CAVE_HANDLE"].split(":")
    data = bytes.fromhex(data)
    handle = Handle()
    handle.type, handle.bytes = int(kind), len(data)
    ctypes.memmove(handle.f, data, len(data))
    directory = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(directory, ctypes.byref(handle), os.O_RDONLY)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "open_by_handle_at")
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def hard_link():
    last = OSError(errno.ENOENT, "none")
    for i, secret in enumerate(secrets):
        try:
            os.link(secret, "link%d" % i)
            return read("link%d" % i)
        except OSError as ex:
            last = ex
    raise last


attempt("direct", lambda: first(secrets))
attempt("proc-self-root", lambda: first(["/proc/self/root" + s for s in secrets]))
attempt("proc-1-root", lambda: first(["/proc/1/root" + s for s in secrets]))
attempt("proc-1-cwd", lambda: first(["/proc/1/cwd/../../../../../../../../.." + s for s in secrets]))
attempt("dot-dot", lambda: first(["../../../../../../../../.." + s for s in secrets]))
attempt("other-processes", other_processes)
attempt("open-by-handle", by_handle)
attempt("hard-link", hard_link)
