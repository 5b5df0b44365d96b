# A chain in which every process ignores SIGTERM, forks the next one and waits: killing it
# one generation at a time, as each becomes the subreaper's child, takes a round per
# generation while the newest generation keeps forking. argv[1] is a marker for the test,
# argv[2] the time (seconds since the epoch) after which every process exits by itself, so
# that nothing outlives a failed test for long, argv[3] the length of the chain (it stops
# earlier where fork fails, at the process limit).
import os
import signal
import sys
import time

end = float(sys.argv[2])
length = int(sys.argv[3])
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for generation in range(length):
    try:
        child = os.fork()
    except OSError:
        break
    if child != 0:
        break
    if generation == 0:
        print("chain started", flush=True)
while time.time() < end:
    time.sleep(0.2)
os._exit(0)
