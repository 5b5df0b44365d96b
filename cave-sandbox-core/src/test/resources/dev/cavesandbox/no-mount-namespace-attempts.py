# Run by LauncherWithoutMountNamespaceTests through the launcher's exec and contain modes
# with --no-mount-namespace ("isolated") and outside them ("control"): each attempt that
# nothing but the launcher's filter and Landlock layer stops when no mount namespace hides
# the host, one line each, NAME=OK or NAME=ERRNO.
# Arguments: MODE PORT OUTSIDE_DIRECTORY PID. PORT is the test's own listener on
# 127.0.0.1, the only address this script ever connects to; PID is the test's JVM, which
# the control only probes with signal 0 and opens read-only.
import errno, os, socket, sys

MODE, PORT, OUTSIDE, PID = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])


def report(name, attempt):
    try:
        attempt()
        print(name + "=OK", flush=True)
    except OSError as ex:
        print(name + "=" + errno.errorcode.get(ex.errno, str(ex.errno)), flush=True)


def unix_socket():
    # A socket of its own beneath the working directory: bound, listened on, connected to.
    path = "own-" + MODE + ".sock"
    with socket.socket(socket.AF_UNIX) as listener, socket.socket(socket.AF_UNIX) as client:
        listener.bind(path)
        listener.listen(1)
        client.connect(path)
    os.unlink(path)


def unix_socketpair():
    first, second = socket.socketpair()
    first.sendall(b"pair")
    if second.recv(4) != b"pair":
        raise OSError(errno.EIO, "the pair lost its message")
    first.close()
    second.close()


def connect_loopback():
    with socket.create_connection(("127.0.0.1", PORT), timeout=30) as connection:
        connection.sendall(MODE.encode())


def write(path):
    with open(path, "w") as file:
        file.write(MODE)


def signal_jvm():
    os.kill(PID, 0)


def open_jvm(name, flags):
    os.close(os.open("/proc/%d/%s" % (PID, name), flags))


report("unix(own)", unix_socket)
report("socket(AF_UNIX, SOCK_DGRAM)", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
report("socketpair", unix_socketpair)
report("connect(127.0.0.1)", connect_loopback)
report("write(inside)", lambda: write("inside-" + MODE))
report("write(outside)", lambda: write(os.path.join(OUTSIDE, "outside-" + MODE)))
report("mkdir(outside)", lambda: os.mkdir(os.path.join(OUTSIDE, "directory-" + MODE)))
report("write(/dev/null)", lambda: write("/dev/null"))
report("kill(jvm, 0)", signal_jvm)
report("open(/proc/jvm/environ)", lambda: open_jvm("environ", os.O_RDONLY))
# Read-write inside (nothing is written); the control opens it read-only, the same
# ptrace-mode check without any reach into the JVM.
report("open(/proc/jvm/mem)", lambda: open_jvm("mem", os.O_RDWR if MODE == "isolated" else os.O_RDONLY))
