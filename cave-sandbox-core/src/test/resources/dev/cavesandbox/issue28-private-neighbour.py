# Issue 28 red team: a second execution, told the first one's private directory and
# shared-memory directory (which a command could only guess: 36^6 names), tries them.
import errno, os, socket, sys

other, other_shm, name = sys.argv[1:4]


def report(label, action):
    try:
        action()
        print(label + "=OK", flush=True)
    except OSError as e:
        print(label + "=" + errno.errorcode.get(e.errno, str(e.errno)), flush=True)


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
    finally:
        s.close()


def write(path):
    with open(path, "w") as f:
        f.write("planted")


report("read(secret)", lambda: open(other + "/secret").read())
report("list(directory)", lambda: os.listdir(other))
report("write(directory)", lambda: write(other + "/planted"))
report("unlink(secret)", lambda: os.unlink(other + "/secret"))
report("connect(socket)", lambda: connect(other + "/a.sock"))
report("list(home)", lambda: os.listdir(os.path.dirname(other)))
report("read(object)", lambda: open(other_shm + "/" + name, "rb").read())
report("write(object)", lambda: write(other_shm + "/" + name))
report("list(shm)", lambda: os.listdir(other_shm))
report("write(shm)", lambda: write(other_shm + "/planted"))
