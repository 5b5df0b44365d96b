# Issue 28 red team, the first of two executions at once: its own listener (a.sock) and
# shared-memory object (argv[1], holding 42), the preload's directory in "shmdir"; waits
# (at most 60 s) for "done", then prints how many connections reached its listener.
import os, socket, sys, time
from multiprocessing import shared_memory

listener = socket.socket(socket.AF_UNIX)
listener.bind("a.sock")
listener.listen(64)
# An abstract name: the network namespace's own on namespaces (refused on seccomp).
abstract = socket.socket(socket.AF_UNIX)
try:
    abstract.bind("\0" + sys.argv[1])
    abstract.listen(64)
    abstract.setblocking(False)
except OSError:
    abstract = None
memory = shared_memory.SharedMemory(name=sys.argv[1], create=True, size=16)
memory.buf[0] = 42
with open("shmdir.tmp", "w") as f:
    f.write(os.environ.get("CAVE_SANDBOX_SHM", ""))
os.rename("shmdir.tmp", "shmdir")
for _ in range(1200):
    if os.path.exists("done"):
        break
    time.sleep(0.05)
listener.setblocking(False)
count = 0
try:
    while True:
        listener.accept()
        count += 1
except BlockingIOError:
    pass
if abstract is not None:
    try:
        while True:
            abstract.accept()
            count += 1
    except BlockingIOError:
        pass
print("arrived=%d" % count)
print("memory=%d" % memory.buf[0])
memory.close()
memory.unlink()
