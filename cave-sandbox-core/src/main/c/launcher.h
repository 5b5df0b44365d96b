/*
 * cave-sandbox-launcher: the last step before a sandboxed command, and the first step
 * before the wrapper (bwrap, or setpriv + unshare). Linux only.
 *
 *   cave-sandbox-launcher --version
 *   cave-sandbox-launcher outer --workdir DIR [--listed PATH]... [--egress DIR] [--command-user UID] -- WRAPPER ARGS...
 *   cave-sandbox-launcher root [ROOT OPTIONS] -- LAUNCHER exec [OPTIONS] [LIMITS] -- CMD ARGS...
 *   cave-sandbox-launcher init [--allow-inet [--egress-port PORT]] [--allow-userns] [--check] [LIMITS] -- CMD ARGS...
 *   cave-sandbox-launcher exec [OPTIONS] [--egress-port PORT] [LIMITS] -- CMD ARGS...
 *   cave-sandbox-launcher contain [OPTIONS] [--command-group GID] [LIMITS] -- CMD ARGS...
 *   cave-sandbox-launcher init|exec|contain [OPTIONS] ... --handover [--]
 *   OPTIONS: --allow-inet --allow-userns --check --no-mount-namespace --command-user UID
 *   VIEW (exec and contain with --no-mount-namespace): --read PATH --mask PATH --write PATH
 *   LIMITS: --limit-memory BYTES --limit-processes N --limit-cpu SECONDS
 *           --limit-file-size BYTES --limit-open-files N
 *
 * outer (in the host, before the wrapper): opens DIR without following any symbolic link
 * (openat2(2) RESOLVE_NO_SYMLINKS; component by component with O_NOFOLLOW where openat2
 * is missing) as fd 3, makes it the working directory, opens this executable as fd 4 and
 * the write end of a start pipe as fd 5, exports CAVE_SANDBOX_WORKDIR=<st_dev>:<st_ino>,
 * and runs WRAPPER as its child, with SIGTERM ignored (the executor's SIGTERM is for the
 * command; the wrapper, which would take the sandbox down at once, gets its SIGKILL). The
 * wrapper binds fd 3 (bwrap --bind-fd) or the working directory (mount --bind .), never
 * the path again, so that a path swapped for a symbolic link after the JVM checked it
 * cannot win, and runs /proc/self/fd/4 inside the sandbox. outer exits with the wrapper's
 * status, or with 125 when the wrapper ended before the inside launcher wrote its start
 * byte: then the sandbox was not set up and the command never ran, whatever the wrapper's
 * own exit code.
 *
 * --listed PATH (outer, repeatable: the readable and writable paths of a filesystem view
 * that the wrapper mounts, in the order it mounts them): each PATH, absolute and
 * normalized, is opened the same way as DIR (O_PATH, no symbolic link in any component)
 * and must be a directory or a regular file; the i-th (from 0) is placed at descriptor
 * LISTED_FD + i, inheritable, before the start pipe. The wrapper binds the descriptor
 * (bwrap --bind-fd / --ro-bind-fd N, mount --rbind /proc/self/fd/N), never the path, so a
 * component swapped for a link after the JVM resolved the path makes outer refuse
 * instead of binding where the link points. init, exec and contain close them with every
 * other descriptor from 3 up.
 *
 * --egress DIR (outer) and --egress-port PORT (init and exec, with --allow-inet): the
 * egress bridge of an allow-list (the JVM's egress proxy serves the unix socket
 * DIR/egress.sock). outer opens DIR like the working directory, without following links,
 * at descriptor EGRESS_FD; inside, after no_new_privs and before Landlock and the filter,
 * the launcher listens on 127.0.0.1:PORT of the sandbox's own network namespace and
 * starts the bridge (start_bridge), which relays each connection to that socket through
 * the descriptor. A port it cannot listen on is a set-up failure.
 *
 * init (PID 1 of bwrap's PID namespace, bwrap --as-pid-1) and exec (the last step under
 * unshare): close every descriptor from 3 up but the start pipe, check that the working
 * directory is still the one outer opened and is the wrapper's writable nosuid,nodev
 * bind of it, drop every capability, set no_new_privs, join a new anonymous
 * session keyring, load the seccomp filter (filter.c), write the start byte, then run the
 * command with default
 * signal dispositions and an empty signal mask. init forks the command, stays PID 1
 * (not dumpable, filtered like the command, so that the command can neither ptrace it
 * nor write its memory through /proc), reaps every orphan and exits with the command's
 * status, 128 + n if it died of signal n. exec replaces itself with the command. The
 * command's process, once in the session the launcher made for it (init's child after its
 * setsid, exec), stacks the session filter, which refuses setsid(2) on every mechanism
 * (build_session_filter), and only then runs --check.
 *
 * --no-mount-namespace (the mechanisms without a mount namespace, which would hide the host's
 * sockets and files): the filter also refuses unix sockets of every type but SOCK_STREAM
 * and SOCK_SEQPACKET, from socket(2) and socketpair(2) (a datagram socket can address any
 * path with sendto(2): add_unix_datagrams in filter-generator.c), the working-directory
 * check keeps the device:inode comparison but there is no bind to check, and after
 * no_new_privs the command process confines itself with Landlock where the kernel has it
 * (restrict_by_landlock in landlock.c, landlock(7)), then stacks the supervision filter.
 *
 * Unix sockets (supervisor.c; --no-mount-namespace only): the command's own processes may
 * talk over unix stream and seqpacket sockets beneath the working directory (LibreOffice's
 * pipe, Chromium's SingletonSocket, Python's multiprocessing), and nothing else. The
 * supervision filter (SECCOMP_RET_USER_NOTIF for connect(2) and bind(2), nothing else:
 * no other call costs anything more) is loaded with SECCOMP_FILTER_FLAG_NEW_LISTENER by
 * the command's process, which passes the listener (SCM_RIGHTS, over a socketpair made
 * before the fork, at SUPERVISOR_FD) to the supervisor before the command runs: a
 * process of the launcher's own that the filter does not cover and that outlives the
 * command's execve, contain on seccomp, and on namespaces exec's process, which then
 * forks the command and stays as its parent (a child subreaper that ignores SIGTERM and
 * exits with the command's status). If the supervisor dies, the kernel answers ENOSYS
 * (fail closed); in practice the command dies with it (contain: the parent-death
 * signal; namespaces: PID 1 exits with its child and the PID namespace ends).
 * For each call, the supervisor reads the address from the target's memory
 * (process_vm_readv(2), /proc/PID/mem where that is refused), its effective ids and
 * umask (/proc/PID/status) and, for a relative path, its working directory
 * (/proc/PID/cwd), the memory and the directory as the target's uid and gid, in that
 * thread, where the supervisor's differ (a root supervisor without CAP_SYS_PTRACE,
 * Docker's default, reaches the command user's process only so); then checks that the call is still pending
 * (SECCOMP_IOCTL_NOTIF_ID_VALID, so that the pid was the target's), takes the socket
 * with pidfd_getfd(2) and performs the call itself on that duplicate, never with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE (the target could rewrite the address between the
 * check and the kernel's read of it):
 *  - a socket that is not AF_UNIX (the private loopback of namespaces), an address that is
 *    not AF_UNIX or has no path (the kernel answers EINVAL, or autobinds): as given;
 *  - an abstract name: as given on namespaces, whose network namespace, and with it its
 *    abstract namespace, is the sandbox's own; EACCES on seccomp (the host's: the
 *    supervisor is outside the command's Landlock scope, and a name bound there could be
 *    reached from the host), but for an autobind;
 *  - a path: its directory, opened from the root or the target's working directory with
 *    openat2(2) RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, must be the working directory
 *    or beneath it (walked up by ".." to the root: device and inode), and its last
 *    component a name. connect(2) goes to /proc/self/fd/N of the socket file opened
 *    O_PATH | O_NOFOLLOW (a symbolic link there: EACCES; not a socket: ECONNREFUSED, as
 *    unix_find_bsd answers); nothing is resolved again. bind(2) must record the
 *    command's own name (getsockname(2) returns it: Python's multiprocessing hands it to
 *    its clients), so it is given the command's address, with the target's working
 *    directory and umask (the process's, set for one bind at a time under a lock:
 *    Docker's default profile refuses unshare(CLONE_FS)), in a thread that a Landlock
 *    ruleset of its own lets make sockets only beneath the working directory
 *    (LANDLOCK_ACCESS_FS_MAKE_SOCK): a directory swapped for a link after the check still
 *    cannot lead the bind outside it;
 *  - a name directly in the host's /tmp (the directory itself, compared by device and
 *    inode): the command's own, in PRIVATE_SOCKETS (".cave-sandbox-sockets") of the
 *    working directory, made on first use for the target's uid and gid, mode 0700: a bind
 *    makes it there (through /proc/self/fd/<directory>/<name>, so getsockname(2) does not
 *    give "/tmp/<name>" back; a stale socket of that name, whose connect is refused, is
 *    removed first, as the program's own unlink(2) of "/tmp/<name>" reached only the
 *    host's /tmp), a connect reaches only what is there. LibreOffice puts its pipe in
 *    /tmp whenever access(2) says /tmp is writable, whatever TMPDIR says
 *    (sal/osl/unx/pipe.cxx), and Landlock does not change what access(2) answers; the
 *    JVM's attach socket (/tmp/.java_pid<pid>) and every other name in the host's /tmp
 *    stay out of reach;
 *  - anything else (another call): EACCES.
 * The call is performed with the target's effective uid and gid, no supplementary group
 * and no capability, in that thread only (raw setresuid(2), setresgid(2), capset(2)): the
 * command's permissions decide, the socket file is the command's own, with its umask, and
 * its peer's SO_PEERCRED shows the command's uid and gid (its pid is the supervisor's). The
 * target's /proc entries are found by its pid in the namespace of /proc (the host's: on
 * namespaces the supervisor's PID namespace is the sandbox's), read from its pidfd's
 * fdinfo.
 * Each call runs in a thread of its own (at most 64 at once; one more gets EAGAIN), so
 * that a connect(2) blocked on a full backlog stalls nobody else; while any runs, the
 * supervisor checks every 20 ms that its target still waits, and interrupts the thread
 * of one whose wait a signal ended (SIGUSR1, no SA_RESTART), so that the socket stays
 * unconnected, as the kernel leaves it, for the restarted call. A connection made in the
 * window before that check is remembered, and the target's next connect(2) of that
 * socket gets 0 instead of EISCONN (any other connect of a connected socket: EISCONN).
 * Without what the supervisor needs (Landlock, pidfd_open(2) and pidfd_getfd(2), Linux
 * 5.6; a listener, Linux 5.0) the command's process stacks the unix refusal filter
 * instead, which refuses socket(AF_UNIX) altogether; --check reports which
 * (unix=supervised own=connected, or unix=refused REASON own=ERRNO), after an attempt at
 * a socket of its own.
 *
 * VIEW (the filesystem view of those mechanisms, enforced by the same Landlock ruleset; each
 * PATH absolute and normalized, opened without following a symbolic link in any
 * component, so that a path swapped for a link after the JVM resolved it fails instead
 * of widening the view): --write PATH may be written beneath, like the working
 * directory. --read PATH (a "system" view) makes the ruleset handle reading and
 * executing too: the command may then read only beneath the working directory, the read
 * paths, the write paths, /proc and the device files (restrict_by_landlock). --mask PATH
 * names a path inside a read path that gets no rule: Landlock only allows, so a read path
 * with a masked path beneath it gets a rule for each of its entries instead, recursively
 * along the masked path's ancestors only (/etc becomes each entry of /etc but shadow,
 * ..., and each entry of /etc/ssl but private); such an expanded directory cannot be
 * listed itself, as READ_DIR on it would reach the masked directories too. Without
 * --read reading stays as the host allows it (the host view). A view that needs Landlock
 * on a kernel without it is a set-up failure, but under --check, which reports
 * landlock=unavailable for the probe to judge.
 *
 * root (PID 1 of unshare's namespaces, exec'd by unshare --fork as root of its new user
 * namespace, for the unshare and namespaces mechanisms; newroot.c, rootoptions.c,
 * readonly.c): builds the unshare mechanism's view with mount(2) itself, as bubblewrap
 * does (the namespaces mechanism has no mount namespace and passes no view option), then
 * forks the command's launcher, which goes on into exec in-process (the argv after "--",
 * whose options are parsed and checked before anything is mounted). It refuses to run
 * unless /proc/self/uid_map maps one id (a wrapper that ran it in the host's namespaces)
 * and it is PID 1. In order: a system view's new root (--new-root DIR: a tmpfs, mode
 * 0755, nosuid, nodev; --system PATH bound recursively into it, --link LINK=TARGET, the
 * host's /dev bound recursively, a new proc); each --hide PATH an empty tmpfs (mode
 * 1777, nosuid, nodev, --tmpfs-size BYTES); each --bind-listed N:PATH:ro|rw, PATH bound
 * recursively onto a mount point made where missing (by the type of descriptor N) from
 * the path as opened in the new mount namespace before the first mount, whose device and
 * inode, and the mount's after it, must be those of fstat(N), outer's descriptor (a
 * component swapped for a link since: a set-up failure), read-only or nosuid,nodev; the
 * working directory (".") bound onto --workdir PATH, nosuid and nodev, which exec checks
 * (device:inode, the bind's flags); each --mask-file PATH the host's /dev/null, each
 * --mask-dir PATH an empty read-only tmpfs; then pivot_root(".", ".") into the new root
 * and the host's root detached (MNT_DETACH); with --read-only every writable mount of
 * /proc/self/mountinfo read-only but /proc, /dev/pts, the pseudo file systems below
 * /sys, the hidden directories, the working directory and what lies beneath them, the
 * writable listed paths and the masked files (mount_setattr(2), AT_RECURSIVE for a
 * system directory that holds none of those; before Linux 5.12 MS_REMOUNT | MS_BIND |
 * MS_RDONLY with the mount's own statvfs flags); each --key-list PATH that exists the
 * host's /dev/null; with --root-sysctls (a root caller, whose uid 0 is the host's)
 * /proc/sys and /proc/sysrq-trigger read-only; with --loopback lo up (SIOCSIFFLAGS);
 * then it enters the working directory by its path. With --pid1-user ID, PID 1 enters a
 * user namespace of its own in which it is ID (setgroups denied, one-line maps) and
 * executes itself again with --map only, so that its memory belongs to that namespace,
 * which maps no root: its /proc files then belong to the host's root, not to the
 * command's uid (proc(5)). PID 1 passes SIGTERM on to its namespace, forks the command's
 * launcher in a session of its own, which with --map UID:GID enters a user namespace of
 * its own nested in PID 1's as UID:GID, keeps no descriptor above 2, drops its
 * capabilities (CAP_KILL kept for a command user's tree), reaps every orphan and exits
 * with the command's status.
 *
 * Every mode but --version makes itself non-dumpable first (prctl(2) PR_SET_DUMPABLE), so
 * that the command, which may share its uid, never reads a descriptor, the working
 * directory or the memory of a process of the sandbox's own through /proc.
 *
 * contain (the seccomp mechanism, no namespaces at all: outer's wrapper, named as
 * /proc/self/fd/4; outer's child runs it without executing the launcher again, see
 * contain_mode): becomes a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), asks
 * for SIGHUP when outer dies, and forks the command, which makes a session of its own and
 * does the set-up of exec and writes the start byte. Its filter refuses setsid(2) and
 * setpgid(2), so that every process of the command's tree stays in the command's process
 * group. When the command exits, or on SIGHUP or SIGINT, contain kills that group with
 * one SIGKILL, which no fork can outrun (end_tree), reaps until it has no child left, and
 * exits with the command's status.
 *
 * --command-user UID (a JVM running as root in the initial user namespace, whose commands
 * the kernel would not hold to RLIMIT_NPROC: copy_process() exempts the real uid 0 of
 * that namespace). outer, still root on the host, creates a user namespace whose uid and
 * gid maps are "0 0 1" and "UID UID 1" (user_namespaces(7): a writer with CAP_SETUID
 * and CAP_SETGID in the parent namespace may map any ids) and joins it before it runs
 * the wrapper, which then creates no user namespace of its own. exec, and init's command
 * child (PID 1 keeps uid 0 and with it the parent-death signal that a change of the
 * effective uid would clear; it drops every capability once it has forked), switch to
 * UID (real, effective and saved uid and gid; no supplementary group), and keep two
 * capabilities: CAP_DAC_OVERRIDE and CAP_FOWNER (with --no-mount-namespace only
 * CAP_DAC_OVERRIDE: no read-only root there), also ambient so that the command has them
 * after execve(2). In that namespace they apply only to files whose
 * owner and group are both mapped, root:root files (capable_wrt_inode_uidgid): the
 * command can still read, write and chmod a root JVM's working directory, as its owner
 * root could, but gains nothing over any other file (a root:shadow /etc/shadow becomes
 * unreadable). The switch sets SECBIT_NO_SETUID_FIXUP (locked), so that access(2), which
 * checks with the real uid, counts those capabilities too, as open(2) does. Its processes
 * count against RLIMIT_NPROC as UID's in that namespace: the execution's own. With
 * contain there is no user namespace (outer gets no --command-user): contain stays root,
 * its command child switches to UID, a uid of the host, with no capability at all (in
 * the initial namespace CAP_DAC_OVERRIDE would reach every file), and asks again for the
 * parent-death signal that the switch cleared. --command-group GID (contain only) gives
 * it GID as its real, effective and saved gid instead of UID: the JVM runs each execution
 * as a uid of its own and all of them with one gid, the command user's, to which it hands
 * the working directory's group for the execution (it is the JVM's, mode 0700), as the
 * command cannot write it otherwise. RLIMIT_NPROC then counts UID's other tasks of the
 * host too (see LIMITS), and every process of UID on the host can signal the command
 * (ptrace needs the gid too, ptrace_may_access). With --command-group the command starts
 * with the caller's umask without its group-write bit (S_IWGRP), so that what one
 * execution creates in a working directory that several share stays writable for the
 * others through the gid, as it was when they shared one uid.
 *
 * LIMITS (setrlimit(2)), set in the process that becomes the command and inherited by
 * its whole tree, never in init's PID 1 or contain's subreaper, whose bookkeeping they
 * must not stop: --limit-memory RLIMIT_DATA, --limit-processes RLIMIT_NPROC, --limit-cpu
 * RLIMIT_CPU (hard one second above soft: SIGXCPU first, SIGKILL one second of CPU
 * later), --limit-file-size RLIMIT_FSIZE (SIGXFSZ), --limit-open-files RLIMIT_NOFILE;
 * soft = hard otherwise, and RLIMIT_CORE, RLIMIT_RTPRIO and RLIMIT_NICE are always 0
 * (no core dump, no real-time priority, no nice value below 0). A value above the hard limit the
 * launcher inherited (the JVM's) becomes that hard limit, which is stricter and cannot be
 * raised without CAP_SYS_RESOURCE. The command cannot raise them: it
 * has no capability (CAP_SYS_RESOURCE of a user namespace does not count for rlimits).
 * RLIMIT_NPROC counts every task (threads too) of the real uid in the task's user
 * namespace (kernel/fork.c copy_process, kernel/ucount.c is_rlimit_overlimit): with a
 * user namespace of the sandbox's own, only the command's tasks and PID 1; without one
 * (contain), every task of the uid, so contain's command adds the tasks of its real uid
 * that it sees in /proc at start outside the JVM's tree (the JVM's threads and the uid's
 * other processes; not the JVM's other executions, whose room must not pass to this one
 * when they end; processes of that uid in other PID namespaces count but are not seen),
 * and with --check reports how many as nproc_others=N. The kernel never
 * applies RLIMIT_NPROC to the real uid 0 of the initial user namespace: a root JVM's
 * commands are not bounded by it on any mechanism. The values are checked before anything
 * else (a positive decimal that fits), and set before the start byte: a value the kernel
 * refuses is a set-up failure.
 *
 * --handover (init, exec, contain; no command after "--"): the command comes after the
 * set-up, in a frame on stdin (handover.c). The process that will run the command does the
 * whole set-up (filter, Landlock, command user, limits, --check), then writes the ready
 * marker HANDOVER_READY on stdout, then reads exactly one frame from fd 0: HANDOVER_MAGIC,
 * uint32 version (HANDOVER_VERSION), uint32 length of the body (at most HANDOVER_MAX), and
 * the body: uint32 argc, uint32 envc, then argc + envc NUL-terminated strings (the
 * arguments, then the NAME=VALUE variables), nothing after them; native byte order. Only
 * the JVM holds the pipe's write end, and read(2) on a pipe never returns more than asked,
 * so the command's stdin follows the frame untouched. Any mismatch (magic, version,
 * length, counts, a string without its NUL, argc 0, a variable without '=', an end of
 * file) is a set-up failure before the start byte: the command never runs. The command
 * then gets the frame's environment and nothing of the wrappers' (PRELOAD_VARIABLE, if
 * the frame has it, still becomes LD_PRELOAD). After the preload and the start byte, right
 * before execve(2), the same process writes the started marker HANDOVER_STARTED on stdout:
 * the 8 bytes after the ready marker, and after them only the command's own output. A
 * sandbox that ended without it never started its command, whatever its exit code (outer
 * killed from outside during the set-up or while waiting for the frame: 137): the executor
 * reports a launch failure, not a result. An execve(2) that fails after it is the command's
 * 126 or 127. The executor spawns every isolated command this way, cold or prepared ahead
 * (a warm sandbox waits in the read).
 *
 * Exit codes of the launcher itself: 125 when the sandbox could not be set up (the reason
 * on stderr, prefixed "cave-sandbox-launcher:"), 126 when the command exists but cannot
 * be executed, 127 when it does not exist (the shell's convention, sh(1) and bash(1)).
 *
 * The seccomp filter is built with libseccomp; REFUSALS (refusals.h) is its whole list, each
 * entry with its reason and a harmless attempt that --check makes after the filter is
 * loaded (the attempt's arguments are invalid, so that without the filter the kernel
 * answers with another error, or succeeds without effect on anything but this process).
 *
 * The build (cave-sandbox-core/pom.xml) compiles two programs from these files.
 * filter-generator.c with fail.c (gcc, glibc, libseccomp) is the build's filter
 * generator: it builds the filter of each combination of --allow-inet, --allow-userns,
 * --no-mount-namespace and contain's missing PID namespace with libseccomp and writes the
 * BPF programs that libseccomp exports as a C header, cave-sandbox-filters.h. Every other
 * .c file (musl, static) is the launcher, whose filter.c includes that header and loads
 * the program that fits. musl because a static glibc program spends about 0.5 ms before
 * main() on a virtual machine (its CPUID probes of the cache layout trap to the
 * hypervisor), and the launcher starts twice per execution.
 *
 * The files, one per concern: main.c (the modes' dispatch), options.c (the command
 * line), outer.c, init.c, contain.c and newroot.c (the modes; pid1.c: PID 1's fork and
 * wait, shared by init and root; newroot.h, rootoptions.c and readonly.c: root's plan,
 * its options and its read-only pass), setup.c (the set-up that init, exec and contain
 * share, and exec itself), supervisor.c with supervisor-dispatch.c, supervisor-path.c,
 * supervisor-worker.c and supervisor-check.c (the supervisor of unix sockets;
 * supervisor.h: what they share), users.c (capabilities, the command user and its user
 * namespace), limits.c (rlimits),
 * handover.c (the command's frame under --handover), landlock.c, filter.c (loading the
 * generated filters, the --check attempts), refusals.h (the one list of refusals),
 * bridge.c (the egress bridge), paths.c (opening paths without following links), fail.c
 * (the set-up failure, shared with the generator), filter-generator.c (the build's
 * generator).
 */
#ifndef CAVE_SANDBOX_LAUNCHER_H
#define CAVE_SANDBOX_LAUNCHER_H

#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#define LAUNCHER_VERSION "20"

/* The environment variable in which the executor hands the launcher the shared-memory
 * library that the command gets as LD_PRELOAD (setup.c hand_over_preload). Mirrored by
 * SharedMemoryPreload.LAUNCHER_VARIABLE on the Java side. */
#define PRELOAD_VARIABLE "CAVE_SANDBOX_PRELOAD"
#define DIRECTORY_FD 3
#define SELF_FD 4
#define START_FD 5
/* The egress directory (outer's --egress), which holds the JVM's egress proxy socket. */
#define EGRESS_FD 6
#define EGRESS_SOCKET "egress.sock"
/* The command process's end of the channel to the supervisor of unix sockets (supervisor.c),
 * over which it sends the supervision filter's listener. */
#define SUPERVISOR_FD 7
/* The first listed path (--listed); the others follow. Above START_FD, with room. */
#define LISTED_FD 10
#define WORKDIR_VARIABLE "CAVE_SANDBOX_WORKDIR"
#define TOKEN_VARIABLE "CAVE_SANDBOX_LAUNCH_TOKEN"
#define EXIT_SETUP 125
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

/* ---- Hand-over (handover.c; LauncherContract mirrors each, LauncherContractTests compares) */
/* The ready marker on stdout: the set-up is done, the launcher waits for its frame. */
#define HANDOVER_READY "CAVE-RDY"
/* The started marker on stdout: the frame was read and checked, only execve(2) is left. */
#define HANDOVER_STARTED "CAVE-RUN"
/* The first 8 bytes of a frame. */
#define HANDOVER_MAGIC "CAVEWARM"
#define HANDOVER_VERSION 1
/* The largest body of a frame: 2 MiB + 64 KiB, above ARG_MAX (execve(2)'s 2 MiB). */
#define HANDOVER_MAX 2162688

/* Kernel interfaces (uapi), spelled out: musl's headers do not carry linux/. The others
 * are with the code that uses them. */
#define CAVE_KEYCTL_GET_KEYRING_ID 0
#define CAVE_KEYCTL_JOIN_SESSION_KEYRING 1
#define CAVE_KEY_SPEC_SESSION_KEYRING (-3)
/* What the command user keeps (capabilities(7)): CAP_DAC_OVERRIDE (1), CAP_FOWNER (3). */
#define COMMAND_USER_CAPABILITIES ((1ULL << 1) | (1ULL << 3))
/* And with --no-mount-namespace only CAP_DAC_OVERRIDE: the host's root:root files are
 * writable there (no read-only root), and Landlock does not cover chmod(2), so
 * CAP_FOWNER would let the command open /etc/passwd to every local user. */
#define UNMOUNTED_COMMAND_USER_CAPABILITIES (1ULL << 1)
/* And what the switch needs: CAP_SETGID (6), CAP_SETUID (7), CAP_SETPCAP (8). */
#define SWITCH_CAPABILITIES (COMMAND_USER_CAPABILITIES | (1ULL << 6) | (1ULL << 7) | (1ULL << 8))
/* What init's PID 1 keeps when the command runs as the command user: CAP_KILL (5), in its
 * own user namespace only, so that it can pass SIGTERM on to the command's tree. */
#define PID1_CAPABILITIES (1ULL << 5)

/* struct sock_filter and struct sock_fprog of linux/filter.h. */
struct cave_sock_filter {
	uint16_t code;
	uint8_t jt;
	uint8_t jf;
	uint32_t k;
};

struct cave_sock_fprog {
	unsigned short len;
	const struct cave_sock_filter *filter;
};

/* The command's resource limits: each option and its resource (setrlimit(2)), in
 * LIMIT_OPTIONS (limits.c). */
struct limit_option {
	const char *option;
	int resource;
	const char *name;
};

#define LIMIT_COUNT 5

extern const struct limit_option LIMIT_OPTIONS[LIMIT_COUNT];

struct options {
	int allow_inet;
	int allow_userns;
	int check;
	int no_mount_namespace;
	/* --command-user: the uid (and gid) the command runs as; -1: the caller's. */
	long command_user;
	/* --command-group (contain only): the gid the command runs as instead of
	 * command_user; -1: command_user. */
	long command_group;
	/* contain: no user namespace, so the command user is a uid of the host and keeps no
	 * capability. */
	int host_user;
	/* Per LIMIT_OPTIONS entry; 0: not set (every set value is positive). */
	unsigned long long limits[LIMIT_COUNT];
	/* The filesystem view (--read, --mask, --write): paths of argv. */
	const char **reads;
	size_t read_count;
	const char **masks;
	size_t mask_count;
	const char **writes;
	size_t write_count;
	/* outer's --listed paths: paths of argv, in the wrapper's order. */
	const char **listed;
	size_t listed_count;
	/* --egress-port: the port of the egress bridge on 127.0.0.1; 0: none. */
	/* outer's --workdir and --egress: paths of argv; NULL: not given. */
	const char *workdir;
	const char *egress;
	unsigned long egress_port;
	/* contain: no PID namespace, so the command's process group is what ends its tree:
	 * the filter keeps every process of the tree in it (setsid and setpgid refused). */
	int no_pid_namespace;
	/* --handover: the command comes in a frame on stdin after the set-up (handover.c). */
	int handover;
};

/* ---- the shape of REFUSALS (refusals.h) ------------------------------------------------ */

/* When an entry applies: 1: only without --allow-inet; 2: only without --allow-userns;
 * 4: only with --no-mount-namespace; 8: only without a PID namespace (contain); 0: always. */
#define UNLESS_INET 1
#define UNLESS_USERNS 2
#define ONLY_NO_MOUNT_NAMESPACE 4
#define ONLY_NO_PID_NAMESPACE 8

/* One filter per combination of the four options that REFUSALS depend on. */
#define FILTER_VARIANTS 16
/* After them, the session filter (build_session_filter), the supervision filter
 * (connect(2) and bind(2) to the supervisor: build_supervision_filter) and the filter that
 * refuses socket(AF_UNIX) where there is no supervisor (build_unix_refusal_filter). */
#define SESSION_FILTER FILTER_VARIANTS
#define SUPERVISION_FILTER (FILTER_VARIANTS + 1)
#define UNIX_REFUSAL_FILTER (FILTER_VARIANTS + 2)
#define FILTER_COUNT (FILTER_VARIANTS + 3)

/* ---- fail.c --------------------------------------------------------------------------- */

extern const char *launch_token;

void fail(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ---- options.c ------------------------------------------------------------------------ */

int normalized_path(const char *path);
char **parse_options(int argc, char **argv, struct options *options);
void check_options(const char *mode, const struct options *options);

/* ---- handover.c ----------------------------------------------------------------------- */

char **await_handover(char ***environment);
void write_started(void);

/* ---- paths.c -------------------------------------------------------------------------- */

int open_path_no_symlinks(const char *path, int directory);
int open_no_symlinks(const char *path);

/* ---- filter.c ------------------------------------------------------------------------- */

void load_filter(const struct options *options);
void load_session_filter(void);
void supervise_unix(void);
const char *errno_name(int error, char *buffer, size_t size);
void check(const struct options *options);

/* ---- landlock.c ----------------------------------------------------------------------- */

void restrict_by_landlock(const struct options *options);
void check_landlock(const struct options *options);
int socket_ruleset(int directory);
int restrict_thread(int ruleset);

/* ---- supervisor.c, supervisor-check.c ------------------------------------------------- */

int prepare_supervisor(const struct options *options);
int supervision_prepared(void);
const char *supervision_unavailable(void);
void set_supervision_unavailable(const char *reason);
void supervisor_child(void);
void send_listener(int listener);
void supervise(void);
void check_unix(void);

/* ---- users.c -------------------------------------------------------------------------- */

void drop_capabilities(unsigned long long keep, int ambient);
void switch_user(const struct options *options);
void become_command_user(const struct options *options);
void join_command_user_namespace(long user);

/* ---- limits.c ------------------------------------------------------------------------- */

void set_limits(const struct options *options, int shared_uid);

/* ---- bridge.c ------------------------------------------------------------------------- */

void start_bridge(const struct options *options, int start, int pid1);

/* ---- setup.c -------------------------------------------------------------------------- */

void close_above_stderr(void);
void signal_start(int start);
void catch_signal(int signal, void (*handler)(int));
void catch_terminate(void (*handler)(int));
int set_up(const struct options *options, int pid1);
void execute(char **argv) __attribute__((noreturn));
void start_command(const struct options *options, int start, char **argv) __attribute__((noreturn));
void exec_mode(const struct options *options, char **argv) __attribute__((noreturn));

/* ---- the modes: outer.c, pid1.c (PID 1's fork and wait), init.c, contain.c ------------- */

int outer(const struct options *options, char **argv);
int reap_until(pid_t command);
pid_t fork_command(void);
void pass_on_to_namespace(int signal);
int init(const struct options *options, char **argv);
int contain(const struct options *options, char **argv);
int contain_mode(struct options *options, char **argv);

/* ---- root: newroot.c, readonly.c (newroot.h) ------------------------------------------- */

int new_root(int argc, char **argv);

#endif
