# Run by UnixSocketSupervisionTests inside a sandbox and as the control outside one: a
# blocking connect(2) to a listener of its own whose backlog is full, interrupted by a
# signal (SIGALRM after one second), then, once the backlog has room, connected again.
import socket, signal, time, os
class Alarm(Exception): pass
def h(*a): raise Alarm()
signal.signal(signal.SIGALRM, h)
p = "bl.sock"
try: os.unlink(p)
except FileNotFoundError: pass
l = socket.socket(socket.AF_UNIX); l.bind(p); l.listen(0)
held = []
for i in range(3):
    c = socket.socket(socket.AF_UNIX); c.setblocking(False)
    try: c.connect(p); held.append(c)
    except BlockingIOError: print("backlog full after", i); break
c = socket.socket(socket.AF_UNIX)
t = time.time(); signal.alarm(1)
try:
    c.connect(p); print("connected?")
except Alarm:
    print("interrupted after", round(time.time() - t, 2))
signal.alarm(0)
a, _ = l.accept()
try:
    c.connect(p); print("then connected")
except OSError as e: print("then", e)
