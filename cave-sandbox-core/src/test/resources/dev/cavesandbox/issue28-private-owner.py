# Issue 28 red team: an execution in its private working directory. Prints its directory
# and the preload's, keeps a listener, a file and a shared-memory object (argv[1]), and
# waits for a line on stdin (the test's "done"), then prints what reached it.
import os, socket, sys
from multiprocessing import shared_memory

listener = socket.socket(socket.AF_UNIX)
listener.bind("a.sock")
listener.listen(64)
with open("secret", "w") as f:
    f.write("42")
memory = shared_memory.SharedMemory(name=sys.argv[1], create=True, size=16)
memory.buf[0] = 42
print(os.getcwd(), flush=True)
print(os.environ.get("CAVE_SANDBOX_SHM", ""), flush=True)
sys.stdin.readline()
listener.setblocking(False)
count = 0
try:
    while True:
        listener.accept()
        count += 1
except BlockingIOError:
    pass
print("arrived=%d" % count)
print("memory=%d" % memory.buf[0])
print("entries=%s" % ",".join(sorted(os.listdir("."))))
memory.close()
memory.unlink()
