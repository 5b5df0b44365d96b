# ContainInPlaceBreakInTests: looks for a launch token in everything of every process it can
# read under /proc (environ and cmdline of each process and each thread), then tries the
# ptrace-mode files (environ, mem, the descriptors' targets, cwd) of each of its
# ancestors: on the seccomp mechanism contain (which now runs in outer's child, with
# outer's memory and original environment block, the token's included) and outer.
# Prints "TOKEN <where> <value>" for each token found, "READ <pid> <file>" for each
# ancestor's file it could open or descriptor it could resolve, "LISTED <pid> fd <count>"
# where it could list the descriptors, and last
# "SCANNED <environs read> ANCESTORS <pid>,<pid>,...".
import os

NAME = b"CAVE_SANDBOX_LAUNCH_TOKEN="


def scan(path, where):
    try:
        with open(path, "rb") as source:
            data = source.read()
    except OSError:
        return 0
    start = data.find(NAME)
    while start >= 0:
        value = data[start + len(NAME):].split(b"\0")[0].decode("utf-8", "replace")
        print("TOKEN", where, value, flush=True)
        start = data.find(NAME, start + 1)
    return 1


def ancestors():
    found = []
    pid = os.getpid()
    while True:
        try:
            with open("/proc/%d/status" % pid) as status:
                parent = int([line for line in status if line.startswith("PPid:")][0].split()[1])
        except (OSError, IndexError, ValueError):
            break
        if parent == 0:
            break
        found.append(parent)
        pid = parent
    return found


environs = 0
for entry in os.listdir("/proc"):
    if not entry.isdigit():
        continue
    environs += scan("/proc/%s/environ" % entry, entry + "/environ")
    scan("/proc/%s/cmdline" % entry, entry + "/cmdline")
    try:
        tasks = os.listdir("/proc/%s/task" % entry)
    except OSError:
        tasks = []
    for task in tasks:
        if task != entry:
            scan("/proc/%s/task/%s/environ" % (entry, task), entry + "/task/" + task + "/environ")
line = []
for pid in ancestors():
    line.append(str(pid))
    for name in ("environ", "mem"):
        try:
            os.close(os.open("/proc/%d/%s" % (pid, name), os.O_RDONLY))
            print("READ", pid, name, flush=True)
        except OSError:
            pass
    try:
        os.listdir("/proc/%d/cwd" % pid)
        print("READ", pid, "cwd", flush=True)
    except OSError:
        pass
    # Listing fd may pass on the directory's mode (a root JVM's command user keeps
    # CAP_DAC_OVERRIDE in its user namespace); what a descriptor is needs ptrace access.
    try:
        descriptors = os.listdir("/proc/%d/fd" % pid)
        print("LISTED", pid, "fd", len(descriptors), flush=True)
    except OSError:
        descriptors = []
    for descriptor in descriptors:
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, descriptor))
            print("READ", pid, "fd", descriptor, target, flush=True)
        except OSError:
            pass
print("SCANNED", environs, "ANCESTORS", ",".join(line), flush=True)
