# Reproduces, without a container runtime, the confinement of a container (see
# platform-facts.md, "Containers, seccomp and Landlock"), for ContainerConfinement:
#   container-confinement.py PROFILE USER -- COMMAND...
# loads a seccomp filter built by libseccomp's own binding (Debian's python3-seccomp;
# libseccomp sets no_new_privs, as allowPrivilegeEscalation: false does) and then
# executes COMMAND under setpriv.
# PROFILE docker-default: Docker's default capability set as bounding set, and unshare,
#   setns, the mount calls and clone with any CLONE_NEW* flag refused with EPERM, clone3
#   with ENOSYS (so that libc falls back to clone), as Docker's default seccomp profile
#   does; everything else allowed.
# PROFILE mounts-refused: only the mount calls refused with EPERM (containerd's AppArmor
#   profile under Kubernetes); no capability change.
# PROFILE unconfined: no filter and no capability change (a host's own unprivileged JVM,
#   with USER nobody).
# USER root keeps the user; USER nobody switches to uid and gid 65534 with no groups.
import errno, os, sys

import seccomp

DOCKER_CAPABILITIES = ("-all,+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,"
                       "+net_bind_service,+net_raw,+sys_chroot,+mknod,+audit_write,+setfcap")
MOUNT_CALLS = ("mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
               "fspick", "mount_setattr")
# CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
# CLONE_NEWNET: Docker's mask 0x7E020000.
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)

if len(sys.argv) < 5 or sys.argv[3] != "--" or sys.argv[1] not in ("docker-default", "mounts-refused", "unconfined") \
        or sys.argv[2] not in ("root", "nobody"):
    sys.exit("usage: container-confinement.py docker-default|mounts-refused|unconfined root|nobody -- COMMAND...")
profile, user, command = sys.argv[1], sys.argv[2], sys.argv[4:]

setpriv = ["/usr/bin/setpriv"]
if user == "nobody":
    setpriv += ["--reuid=65534", "--regid=65534", "--clear-groups"]
if profile == "docker-default":
    setpriv += ["--bounding-set=" + DOCKER_CAPABILITIES, "--inh-caps=-all"]

rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
for call in MOUNT_CALLS:
    rules.add_rule(seccomp.ERRNO(errno.EPERM), call)
if profile == "docker-default":
    for call in ("unshare", "setns"):
        rules.add_rule(seccomp.ERRNO(errno.EPERM), call)
    for flag in CLONE_NEW_FLAGS:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
if profile != "unconfined":
    rules.load()
os.execv(setpriv[0], setpriv + ["--"] + command)
