#!/bin/sh
# The script the Linux probe runs in the sandbox (ProbeScript): it reports what the child
# sees, one name=value line each, for the probe's verdict (LinuxVerdict). Only sh, coreutils
# and /proc: nothing that a minimal host lacks.
# Arguments: the marker file to read, the file to write (both in the working directory),
# the suffixes of the directory beside the working directory to create a file in and of
# the file the probe planted there, then the hidden directories. The environment gives the working
# directory's path (CAVE_SANDBOX_PROBE_DIRECTORY) and the JVM's pid (CAVE_SANDBOX_PROBE_JVM),
# ProbeSession's variables, and without a mount namespace an execution's shared-memory
# directory (CAVE_SANDBOX_SHM) and preload library (LD_PRELOAD).
marker=$1 write=$2 outside=$3 planted=$4
shift 4
# A name nobody can take first: 16 hex digits from /dev/urandom, picked here, never passed.
r=$(od -An -N8 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n')
# Create a new file, never an existing one (noclobber): ok, refused (the sandbox or the file
# modes: EACCES, EPERM, EROFS), or "failed REASON" (the name taken, no space left, ...).
create() {
  if [ ${#r} -ne 16 ]; then echo 'failed no random name (od /dev/urandom)'; return; fi
  if e=$( (set -C; echo x > "$1") 2>&1 ); then echo ok; return; fi
  case $e in
    *'Permission denied'*|*'Operation not permitted'*|*'Read-only file system'*) echo refused ;;
    *) echo "failed ${e##*: }" ;;
  esac
}
echo "net=$(readlink /proc/self/ns/net)"
echo "pid=$(readlink /proc/self/ns/pid)"
echo "ipc=$(readlink /proc/self/ns/ipc)"
echo "uid=$(id -u)"
echo "gid=$(id -g)"
sed -n 's/^CapEff:[[:space:]]*/caps=/p; s/^NoNewPrivs:[[:space:]]*/nnp=/p; s/^Seccomp:[[:space:]]*/seccomp=/p; s/^SigBlk:[[:space:]]*/sigblk=/p; s/^SigIgn:[[:space:]]*/sigign=/p' /proc/self/status
echo "marker=$(cat "$marker")"
# The device and inode of the directory the child runs in, which the probe compares with its
# own working directory's: a directory swapped in around the launch is another one.
echo "dir=$(stat -c '%d:%i' . 2>/dev/null)"
if [ -n "$CAVE_SANDBOX_PROBE_DIRECTORY" ] && [ -w "$CAVE_SANDBOX_PROBE_DIRECTORY" ]; then echo path=ok; else echo path=unreachable; fi
echo ok > "$write" && echo write=ok
if [ -w / ]; then echo root=writable; else echo root=read-only; fi
for d in "$@"; do echo "hidden=$(stat -c %d "$d") $d"; echo "size=$(stat -f -c %b:%S "$d") $d"; done
sed -n 's/^Max \([a-z][a-z]*\( [a-z][a-z]*\)*\)   *\([^ ]*\) .*/limit=\1:\3/p' /proc/self/limits
if grep -qs 127.0.0.1 /proc/net/fib_trie; then echo lo=up; else echo lo=down; fi
sed -n 's/^ *\([^ |:]*\):.*/if=\1/p' /proc/net/dev
j=$CAVE_SANDBOX_PROBE_JVM
if [ -n "$j" ] && [ -d "/proc/$j" ]; then
  if (exec 3<>"/proc/$j/mem") 2>/dev/null; then echo jvm_mem=writable; else echo jvm_mem=refused; fi
  if head -c 1 "/proc/$j/environ" >/dev/null 2>&1; then echo jvm_environ=readable; else echo jvm_environ=refused; fi
  if kill -0 "$j" 2>/dev/null; then echo jvm_signal=allowed; else echo jvm_signal=refused; fi
else echo jvm=invisible; fi
c=$(create "../${PWD##*/}$outside/$r")
case $c in ok) echo outside_write=allowed ;; *) echo "outside_write=$c" ;; esac
# Without a mount namespace (CAVE_SANDBOX_SHM set): the preload library, the execution's own
# directory of POSIX shared memory objects, and the host's /dev/shm refused.
if [ -n "$CAVE_SANDBOX_SHM" ]; then
  case ":$LD_PRELOAD:" in */libcave-shm.so:*) echo shm_preload=yes ;; *) echo shm_preload=no ;; esac
  if (echo x > "$CAVE_SANDBOX_SHM/probe") 2>/dev/null && rm -f "$CAVE_SANDBOX_SHM/probe"; then echo shm_own=ok; else echo shm_own=refused; fi
  if [ ! -e /dev/shm ]; then echo devshm=absent
  else
    c=$(create "/dev/shm/cave-sandbox-probe-$r")
    case $c in ok) rm -f "/dev/shm/cave-sandbox-probe-$r"; echo devshm=writable ;; *) echo "devshm=$c" ;; esac
  fi
fi
# Unquoted on purpose: the listing's names, one a line, joined by single blanks on one line.
# shellcheck disable=SC2086
if l=$(ls -A / 2>/dev/null); then echo "rootlist="$l; else echo rootlist=refused; fi
if head -c 1 "../${PWD##*/}$planted" >/dev/null 2>&1; then echo planted=readable; else echo planted=refused; fi
if [ -e /etc/shadow ]; then
  if [ -s /etc/shadow ] && head -c 1 /etc/shadow >/dev/null 2>&1; then echo shadow=readable; else echo shadow=refused; fi
else echo shadow=absent; fi
