# Issue 28 red team, the second execution: at the first one's listener and shared memory.
# argv: THE_OTHERS_WORKING_DIRECTORY THE_OTHERS_SHM_DIRECTORY OBJECT HOST_DEV_SHM_OBJECT
import errno, os, socket, sys
from multiprocessing import shared_memory

other, other_shm, name, host_object = sys.argv[1:5]


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


def attach(directory, object_name, value):
    os.environ["CAVE_SANDBOX_SHM"] = directory
    memory = shared_memory.SharedMemory(name=object_name)
    try:
        memory.buf[0] = value
    finally:
        memory.close()


def create(directory):
    os.environ["CAVE_SANDBOX_SHM"] = directory
    shared_memory.SharedMemory(name="cave28-planted", create=True, size=16).close()


report("connect(absolute)", lambda: connect(other + "/a.sock"))
report("connect(abstract)", lambda: connect("\0" + name))
report("connect(relative ..)", lambda: connect("../" + os.path.basename(other) + "/a.sock"))
report("link(other's socket)", lambda: os.link(other + "/a.sock", "l.sock"))
report("connect(link)", lambda: connect("l.sock"))
report("rename(other's socket)", lambda: os.rename(other + "/a.sock", "r.sock"))
original = os.environ.get("CAVE_SANDBOX_SHM", "")
report("shm(CAVE_SANDBOX_SHM=other's)", lambda: attach(other_shm, name, 7))
report("shm(CAVE_SANDBOX_SHM=/dev/shm)", lambda: attach("/dev/shm", host_object, 7))
report("shm create(CAVE_SANDBOX_SHM=/dev/shm)", lambda: create("/dev/shm"))
report("shm(name ../)", lambda: attach(original, "../" + os.path.basename(other_shm) + "/" + name, 7))
report("open(other's object)", lambda: os.open(other_shm + "/" + name, os.O_RDWR))
report("open(/dev/shm object)", lambda: os.open("/dev/shm/" + host_object, os.O_RDWR))
