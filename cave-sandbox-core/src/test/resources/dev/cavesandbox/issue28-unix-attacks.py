# Issue 28 red team: ways around the unix-socket supervisor (supervisor.c) towards host
# listeners outside the working directory. Prints NAME=OUTCOME (OK or the errno's name).
# argv: HOST_SOCKET OWNED_DIRECTORY [ATTACH_SOCKET] (holds owned.sock, chowned to this command's uid by
# the test once it wrote "uid"), every loop bounded in count.
import ctypes, errno, os, socket, sys, threading, time

host, owned = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)


def report(name, action):
    try:
        action()
        print(name + "=OK", flush=True)
    except OSError as e:
        print(name + "=" + errno.errorcode.get(e.errno, str(e.errno)), flush=True)


def connect(path, kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_UNIX, kind)
    try:
        s.connect(path)
    finally:
        s.close()


with open("uid.tmp", "w") as f:
    f.write(str(os.geteuid()))
os.rename("uid.tmp", "uid")
for _ in range(600):
    if os.path.exists("go"):
        break
    time.sleep(0.05)

own = socket.socket(socket.AF_UNIX)
own.bind("own.sock")
own.listen(512)

# A hard link of a host socket the command's uid owns (protected_hardlinks lets the owner).
report("link(owned socket)", lambda: os.link(owned + "/owned.sock", "linked.sock"))
report("connect(linked)", lambda: connect("linked.sock"))
# The host directory that holds it, renamed into the working directory.
report("rename(owned directory)", lambda: os.rename(owned, "moved"))
report("connect(moved)", lambda: connect("moved/owned.sock"))
# The JVM's attach socket (an unprivileged JVM's is the command's uid's): linked,
# renamed, connected to by its name.
if len(sys.argv) > 3:
    attach = sys.argv[3]
    report("link(attach)", lambda: os.link(attach, "attach.sock"))
    report("connect(attach link)", lambda: connect("attach.sock"))
    report("rename(attach)", lambda: os.rename(attach, "attach-moved.sock"))
    report("connect(attach moved)", lambda: connect("attach-moved.sock"))
    report("connect(attach)", lambda: connect(attach))
# An O_PATH descriptor of the host socket, through /proc/PID/fd and after chdir there.
path_fd = os.open(host, os.O_PATH)
report("connect(/proc/pid/fd)", lambda: connect("/proc/%d/fd/%d" % (os.getpid(), path_fd)))
report("connect(/proc/self/fd)", lambda: connect("/proc/self/fd/%d" % path_fd))
directory_fd = os.open(os.path.dirname(host), os.O_PATH | os.O_DIRECTORY)
here = os.open(".", os.O_PATH | os.O_DIRECTORY)
os.fchdir(directory_fd)
report("connect(relative after fchdir(O_PATH))", lambda: connect(os.path.basename(host)))
os.fchdir(here)
# sendto/sendmsg with the host's address on the socket types the filter lets make.
for kind, label in ((socket.SOCK_STREAM, "stream"), (socket.SOCK_SEQPACKET, "seqpacket")):
    s = socket.socket(socket.AF_UNIX, kind)
    report("sendto(" + label + ")", lambda: s.sendto(b"x", host))
    s.close()
# A connect from a thread that is not the process's leader (every JVM's main thread).
worker = threading.Thread(target=lambda: report("thread connect(own)", lambda: connect("own.sock")))
worker.start()
worker.join()

# The address rewritten in memory while the call is in the supervisor (ctypes releases
# the GIL around connect): own.sock and the host path alternate, 300 calls.
class Address(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("path", ctypes.c_char * 108)]

address = Address(socket.AF_UNIX, b"own.sock")
stop = threading.Event()


def flip_address():
    names = (os.path.abspath("own.sock").encode(), host.encode())
    i = 0
    while not stop.is_set():
        address.path = names[i % 2]
        i += 1


flipper = threading.Thread(target=flip_address)
flipper.start()
arrived = 0
for _ in range(300):
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), ctypes.byref(address), ctypes.sizeof(address)) == 0:
        arrived += 1
    s.close()
stop.set()
flipper.join()
print("rewritten address connects=%d" % arrived, flush=True)

# A directory of a bind's path swapped for a link to the host directory meanwhile: the
# bind in the supervisor's worker resolves the path again (Landlock of its thread).
os.mkdir("real")
stop.clear()


def flip_directory():
    hostdir = os.path.dirname(host)
    while not stop.is_set():
        try:
            os.rename("real", "d")
            os.rename("d", "real")
            os.symlink(hostdir, "d")
            os.unlink("d")
        except OSError:
            pass


flipper = threading.Thread(target=flip_directory)
flipper.start()
bound = 0
for i in range(300):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind("d/swap%d.sock" % i)
        bound += 1
    except OSError:
        pass
    s.close()
stop.set()
flipper.join()
print("swapped directory binds=%d" % bound, flush=True)
