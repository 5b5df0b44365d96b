# Run by UnixSocketSupervisionTests inside a sandbox (and as the control outside one): the
# command's own unix stream sockets beneath its working directory, then every way towards
# a host listener outside it, one line each, NAME=OK or NAME=ERRNO.
# Arguments: HOST_SOCKET (a listener of the test's own outside the working directory,
# writable by everyone) [EXTRA_SOCKET ...] (further host sockets, connected to only).
import errno, os, socket, sys

HOST = sys.argv[1]
HOST_DIRECTORY = os.path.dirname(HOST)
HERE = os.getcwd()


def report(name, attempt):
    try:
        attempt()
        print(name + "=OK", flush=True)
    except OSError as ex:
        print(name + "=" + errno.errorcode.get(ex.errno, str(ex.errno)), flush=True)


def own(path, kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_UNIX, kind) as listener, socket.socket(socket.AF_UNIX, kind) as client:
        listener.bind(path)
        listener.listen(1)
        client.connect(path)
        accepted, _ = listener.accept()
        client.sendall(b"own")
        if accepted.recv(3) != b"own":
            raise OSError(errno.EIO, "the connection lost its message")
        accepted.close()
        if listener.getsockname() != path:
            raise OSError(errno.EINVAL, "bound as " + repr(listener.getsockname()))
    os.unlink(path)


def connect(path):
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(path)
        client.sendall(b"escaped")


def bind(path):
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)


def in_directory(directory, attempt):
    os.chdir(directory)
    try:
        attempt()
    finally:
        os.chdir(HERE)


os.makedirs("sub", exist_ok=True)
os.symlink(HOST, "host-link.sock")
os.symlink(HOST_DIRECTORY, "host-directory")
report("own(relative)", lambda: own("own.sock"))
report("own(absolute)", lambda: own(os.path.join(HERE, "own-absolute.sock")))
report("own(subdirectory)", lambda: own("sub/own.sock"))
report("own(seqpacket)", lambda: own("own-seqpacket.sock", socket.SOCK_SEQPACKET))
report("autobind", lambda: socket.socket(socket.AF_UNIX).bind(""))
report("socket(SOCK_DGRAM)", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
report("connect(host)", lambda: connect(HOST))
report("connect(symlink)", lambda: connect("host-link.sock"))
report("connect(symlinked directory)", lambda: connect("host-directory/" + os.path.basename(HOST)))
report("connect(dot-dot)", lambda: connect(os.path.relpath(HOST, HERE)))
report("connect(relative, outside)", lambda: in_directory(HOST_DIRECTORY, lambda: connect(os.path.basename(HOST))))
report("bind(outside)", lambda: bind(os.path.join(HOST_DIRECTORY, "planted.sock")))
report("bind(symlinked directory)", lambda: bind("host-directory/planted-through-link.sock"))
for index, extra in enumerate(sys.argv[2:]):
    report("connect(extra %d)" % index, lambda: connect(extra))
