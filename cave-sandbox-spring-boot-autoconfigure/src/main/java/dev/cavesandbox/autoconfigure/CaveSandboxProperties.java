package dev.cavesandbox.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties of cave-sandbox ({@code cave.sandbox.*}).
 *
 * @param mode What to do when OS-level network isolation is unavailable on this host:
 * 'strict' fails closed and never runs anything unisolated; 'fallback' logs a warning and
 * runs commands without isolation, and every result says so.
 * @param failFast In strict mode, whether startup fails when isolation is unavailable;
 * when false the application starts and every execution throws
 * cave_sandbox_os_network_isolation_unavailable.
 * @param timeout Default time limit of one execution; the whole process tree is
 * terminated when it is reached.
 * @param maxOutput Default cap of each output stream (stdout and stderr separately);
 * bytes beyond it are discarded and the result reports truncation.
 * @param killGracePeriod Time between SIGTERM and SIGKILL when a process tree is
 * terminated after a timeout or a cancellation.
 * @param probeTimeout Time limit of the isolation probe that runs once at startup.
 * @param maxConcurrent Maximum number of executions that run at the same time.
 * @param queueTimeout How long an execution waits for a free slot before it fails with
 * cave_sandbox_concurrency_limit_exceeded.
 * @param workDirectory Directory in which the private working directory of each execution
 * is created (and removed afterwards); defaults to java.io.tmpdir.
 * @param env Environment of the child processes.
 * @param linux Host binaries of the Linux mechanisms.
 * @param mechanism Mechanism that isolates the commands: auto picks the strongest one
 * that the probe verifies on this host (on Linux bwrap, unshare, namespaces without
 * mounts, then seccomp only; sandbox-exec on macOS); none runs without isolation and is
 * only allowed with cave.sandbox.mode=fallback.
 * @param loopback Whether commands get a private loopback interface that is up, so that a
 * server a command starts on 127.0.0.1 is reachable from inside the sandbox; the host's
 * loopback stays unreachable. A request may override it.
 * @param readOnlyRoot Whether the host's filesystem is read-only inside the sandbox,
 * except the working directory and the hidden directories.
 * @param hiddenDirectories Host directories replaced by private, empty, writable tmpfs
 * mounts inside the sandbox, so that the host's unix sockets in them (docker.sock, D-Bus,
 * X11, systemd) cannot be reached; the working directory stays visible even inside one of
 * them. Setting it replaces the default list.
 * @param macos Host binaries of the macOS mechanism.
 * @param limits Resource limits of every command, set by the launcher of the Linux
 * mechanisms; unisolated (fallback mode) and on macOS none is applied. A request may
 * override each of them.
 * @param filesystem What of the host's filesystem the commands see (Linux mechanisms).
 * @param egress Which hosts commands may reach through the egress proxy (Linux mechanisms
 * with a network namespace: bwrap, unshare, namespaces).
 * @param outputFiles The files that executions read back from their private working
 * directory (ExecutionRequest.Builder#outputFile).
 * @param warm The pool of warm sandboxes, set up ahead of their executions.
 */
@ConfigurationProperties("cave.sandbox")
public record CaveSandboxProperties(@DefaultValue("strict") SandboxMode mode, @DefaultValue("true") boolean failFast,
		@DefaultValue("30s") Duration timeout, @DefaultValue("1MB") DataSize maxOutput,
		@DefaultValue("1s") Duration killGracePeriod, @DefaultValue("10s") Duration probeTimeout,
		@DefaultValue("16") int maxConcurrent, @DefaultValue("30s") Duration queueTimeout, @Nullable Path workDirectory,
		@DefaultValue Env env, @DefaultValue Linux linux, @DefaultValue("auto") MechanismChoice mechanism,
		@DefaultValue("false") boolean loopback, @DefaultValue("true") boolean readOnlyRoot, @DefaultValue( {
				"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm" }) List<String> hiddenDirectories,
		@DefaultValue Macos macos, @DefaultValue Limits limits, @DefaultValue Filesystem filesystem,
		@DefaultValue Egress egress, @DefaultValue OutputFiles outputFiles, @DefaultValue Warm warm){

	/**
	 * Return the core settings that these properties describe.
	 * @return the settings
	 */
	public SandboxSettings toSettings() {
		return toSettingsBuilder().build();
	}

	/**
	 * Return a builder of the core settings that these properties describe, for
	 * {@link SandboxSettingsCustomizer customizers} to change.
	 * @return the builder
	 */
	SandboxSettings.Builder toSettingsBuilder() {
		SandboxSettings.CommandUserRange commandUsers = SandboxSettings.CommandUserRange
			.parse(this.linux.commandUserRange());
		SandboxSettings.Builder builder = SandboxSettings.builder()
			.mode(this.mode)
			.timeout(this.timeout)
			.maxOutputBytes(this.maxOutput.toBytes())
			.killGracePeriod(this.killGracePeriod)
			.probeTimeout(this.probeTimeout)
			.maxConcurrent(this.maxConcurrent)
			.queueTimeout(this.queueTimeout)
			.passEnvironment(this.env.pass())
			.environment(this.env.set())
			.unsharePath(this.linux.unsharePath())
			.setprivPath(this.linux.setprivPath())
			.bwrapPath(this.linux.bwrapPath())
			.launcherPath(this.linux.launcherPath())
			.userNamespaces(this.linux.userNamespaces())
			.commandUser(this.linux.commandUser())
			.commandUserRange(commandUsers)
			.sandboxExecPath(this.macos.sandboxExecPath())
			.mechanism(this.mechanism)
			.loopback(this.loopback)
			.readOnlyRoot(this.readOnlyRoot)
			.hiddenDirectories(this.hiddenDirectories.stream().map(Path::of).toList())
			.limits(this.limits.toResourceLimits())
			.filesystemView(this.filesystem.view())
			.readablePaths(this.filesystem.readablePaths().stream().map(Path::of).toList())
			.writablePaths(this.filesystem.writablePaths().stream().map(Path::of).toList())
			.allowedHosts(this.egress.allowedHosts())
			.allowPrivateDestinations(this.egress.allowPrivateDestinations())
			.maxOutputFileBytes(this.outputFiles.maxSize().toBytes())
			.warm(this.warm.toWarmPoolSettings(this.maxConcurrent, commandUsers.size()));
		if (this.workDirectory != null) {
			builder.workDirectory(this.workDirectory);
		}
		return builder;
	}

	/**
	 * Environment of the child processes. Every child starts from a fixed baseline (PATH,
	 * HOME and TMPDIR set to its working directory, LANG=C.UTF-8); no variable of the
	 * parent leaks unless it is named here.
	 *
	 * @param pass Names of variables of this JVM's environment passed to every child.
	 * @param set Variables set in every child, on top of the baseline.
	 */
	public record Env(@DefaultValue List<String> pass, @DefaultValue Map<String, String> set) {

	}

	/**
	 * Host binaries of the Linux mechanisms (bubblewrap, util-linux).
	 *
	 * @param unsharePath Path of util-linux unshare, which creates the user, network,
	 * mount and PID namespaces.
	 * @param setprivPath Path of util-linux setpriv, which ties each sandbox to the life
	 * of the JVM with a parent-death signal.
	 * @param bwrapPath Path of bubblewrap's bwrap.
	 * @param launcherPath Path of an installed copy of cave-sandbox's native launcher,
	 * used instead of the copy extracted from the jar into the work directory; for a work
	 * directory mounted noexec (a read-only one needs a writable volume instead: the
	 * private working directories live there too). It must be this jar's build
	 * (dev/cavesandbox/launcher/linux-x86_64 or linux-aarch64/cave-sandbox-launcher),
	 * whose SHA-256 is checked.
	 * @param userNamespaces Whether sandboxed commands may create user namespaces of
	 * their own (nested containers, unshare --user, a browser's own sandbox). Off by
	 * default: the launcher's seccomp filter refuses them, since a new user namespace
	 * opens kernel attack surface.
	 * @param commandUser Uid (and gid) that the commands of a JVM running as root run as
	 * on the mechanisms with a user namespace (bwrap, unshare, namespaces), so that the
	 * process limit holds: the kernel never applies RLIMIT_NPROC to the host's root. On
	 * the seccomp mechanism its gid is the gid of every execution (their uids come from
	 * command-user-range), to which the working directory's group is given for the
	 * execution. 0 keeps them root on every mechanism, the seccomp mechanism included,
	 * without a process limit. Ignored for a JVM of another user.
	 * @param commandUserRange Uids, written FIRST-LAST, from which each running execution
	 * of a JVM running as root on the seccomp mechanism (no user namespace) takes one of
	 * its own, as a uid of the host without capabilities, so that executions share no
	 * process count and cannot signal or ptrace each other. All of them run with
	 * command-user's gid, which they share: files and IPC objects made group-accessible
	 * stay reachable to the others, and the working directory's group is that gid for the
	 * execution. At least max-concurrent uids. The default lies in a range that systemd's
	 * "Users, Groups, UIDs and GIDs on systemd Systems" lists as unused, below the
	 * subordinate ids of /etc/subuid (from 100000): choose uids that no account or
	 * program on the host uses.
	 */
	public record Linux(@DefaultValue("/usr/bin/unshare") Path unsharePath,
			@DefaultValue("/usr/bin/setpriv") Path setprivPath, @DefaultValue("/usr/bin/bwrap") Path bwrapPath,
			@Nullable Path launcherPath, @DefaultValue("false") boolean userNamespaces,
			@DefaultValue("65534") int commandUser,
			@DefaultValue(SandboxSettings.CommandUserRange.DEFAULT_TEXT) String commandUserRange) {

	}

	/**
	 * Host binaries of the macOS mechanism.
	 *
	 * @param sandboxExecPath Path of sandbox-exec, which applies a Seatbelt profile that
	 * denies the network (deprecated by Apple, but still shipped).
	 */
	public record Macos(@DefaultValue("/usr/bin/sandbox-exec") Path sandboxExecPath) {

	}

	/**
	 * What of the host's filesystem the commands see (Linux mechanisms; on macOS the
	 * host's, read-only).
	 *
	 * @param view 'system' shows the command only what programs need to run: /usr, /bin,
	 * /sbin, /lib*, /etc without its secret files (shadow, sudoers, SSH host keys, TLS
	 * private keys), the JVM's java.home, a new /dev and /proc, the hidden directories
	 * (empty), the working directory and the listed paths; nothing else of the host
	 * exists inside (on the mechanisms without a mount namespace, Landlock refuses
	 * reading it). 'host' shows the host's whole filesystem, read-only, without the
	 * hidden directories.
	 * @param readablePaths Host paths (directories or files) every command sees read-only
	 * besides the view: absolute, without symbolic links. A path that does not exist is
	 * left out, and the verified facts say so. A request may add more.
	 * @param writablePaths Host paths every command sees and may write: absolute, without
	 * symbolic links. A request may add more.
	 */
	public record Filesystem(@DefaultValue("system") SandboxSettings.Filesystem.View view,
			@DefaultValue List<String> readablePaths, @DefaultValue List<String> writablePaths) {

		// Strings, not Paths: Boot's conversion to Path resolves a path that the class
		// path also has (/dev, where this project's classes lie) against the class path.

	}

	/**
	 * Which hosts commands may reach through the egress proxy. Empty (the default): no
	 * egress at all. Otherwise each command's own network namespace gets a bridge on
	 * 127.0.0.1:3128 to a proxy in the JVM (HTTP CONNECT and plain HTTP), HTTP_PROXY,
	 * HTTPS_PROXY, ALL_PROXY (and lower case) and JAVA_TOOL_OPTIONS point at it, and the
	 * proxy resolves each name itself and connects only to what it checked. Only the
	 * mechanisms bwrap, unshare and namespaces can offer it; on seccomp and macOS an
	 * execution fails with cave_sandbox_egress_unavailable.
	 *
	 * @param allowedHosts Entries 'host' (ports 80 and 443), '*.domain' (its subdomains,
	 * ports 80 and 443) or 'host:port' (that port only). A request may replace the list.
	 * @param allowPrivateDestinations Whether the proxy may connect to loopback, private
	 * (RFC 1918, ULA), link-local (169.254.169.254 and other cloud metadata), CGNAT,
	 * multicast and other non-global addresses. Off: a name that resolves to one is
	 * refused (SSRF).
	 */
	public record Egress(@DefaultValue List<String> allowedHosts,
			@DefaultValue("false") boolean allowPrivateDestinations) {

	}

	/**
	 * Resource limits of every command (Linux mechanisms only; docs/resource-limits.md
	 * says what each one bounds and where it cannot).
	 *
	 * @param memory Data memory of each process of the command (RLIMIT_DATA: heap and
	 * private writable mappings; reserved address space that is never made writable does
	 * not count, so a child JVM's reservations pass); an allocation beyond it fails.
	 * @param processes How many processes and threads of the command may exist at once
	 * (RLIMIT_NPROC); a fork beyond it fails. Counted per user in the command's user
	 * namespace (bwrap, unshare, namespaces); on seccomp, which has none, every task of
	 * the JVM's uid counts (the launcher adds those it sees at the start outside the
	 * JVM's tree: the JVM's executions there share the limit). Not enforced when the JVM
	 * runs as root.
	 * @param cpuTime CPU time of each process, rounded up to whole seconds (RLIMIT_CPU):
	 * SIGXCPU when it is used up, SIGKILL one second of CPU later. Unset: no limit.
	 * @param fileSize Largest file each process may write (RLIMIT_FSIZE): a write beyond
	 * it gets SIGXFSZ. It does not bound the working directory as a whole. Unset: no
	 * limit.
	 * @param openFiles How many file descriptors each process may have open
	 * (RLIMIT_NOFILE). Unset: what the JVM has.
	 * @param tmpfsSize Size of each private tmpfs that replaces a hidden directory (bwrap
	 * and unshare mechanisms); a write beyond it fails with ENOSPC.
	 */
	public record Limits(@DefaultValue("4GB") DataSize memory, @DefaultValue("512") int processes,
			@Nullable Duration cpuTime, @Nullable DataSize fileSize, @Nullable Integer openFiles,
			@DefaultValue("256MB") DataSize tmpfsSize) {

		ResourceLimits toResourceLimits() {
			ResourceLimits.Builder builder = ResourceLimits.builder()
				.memory(this.memory.toBytes())
				.processes(this.processes)
				.tmpfsSize(this.tmpfsSize.toBytes());
			if (this.cpuTime != null) {
				builder.cpuTime(this.cpuTime);
			}
			if (this.fileSize != null) {
				builder.fileSize(this.fileSize.toBytes());
			}
			if (this.openFiles != null) {
				builder.openFiles(this.openFiles);
			}
			return builder.build();
		}

	}

	/**
	 * The files that executions read back from their private working directory after the
	 * command's process tree has ended (ExecutionRequest.Builder#outputFile and
	 * #outputFiles), never through a symbolic link.
	 *
	 * @param maxSize Default cap of an execution's output files, all together; a file
	 * that does not fit whole in what is left of it is not read, and the result names it
	 * as omitted and reports truncation. A request may override it (maxOutputFileBytes).
	 */
	public record OutputFiles(@DefaultValue("16MB") DataSize maxSize) {

	}

	/**
	 * The pool of warm sandboxes: sandboxes set up ahead on the verified mechanism, each
	 * waiting for one execution whose request has no listed paths, no egress, and the
	 * settings' loopback and limits; other requests, and any while the pool is empty,
	 * take the cold path at once. Each warm sandbox serves one execution.
	 *
	 * @param size How many sandboxes wait ready, at most max-concurrent; 0 turns the pool
	 * off. Defaults to 2, fewer where max-concurrent or the command user range beside it
	 * holds fewer.
	 * @param maxAge How long a sandbox may wait before it is discarded and replaced.
	 */
	public record Warm(@Nullable Integer size, @DefaultValue("60s") Duration maxAge) {

		/**
		 * Return the pool: the size set, or the default fitted to the other settings
		 * ({@link WarmPoolSettings#fitting}).
		 * @param maxConcurrent cave.sandbox.max-concurrent
		 * @param commandUids how many uids cave.sandbox.linux.command-user-range holds
		 * @return the pool's settings
		 */
		WarmPoolSettings toWarmPoolSettings(int maxConcurrent, long commandUids) {
			return (this.size != null) ? new WarmPoolSettings(this.size, this.maxAge)
					: new WarmPoolSettings(WarmPoolSettings.DEFAULT_SIZE, this.maxAge).fitting(maxConcurrent,
							commandUids);
		}

	}

}
