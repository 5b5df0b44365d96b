package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import org.jspecify.annotations.Nullable;

/**
 * One way of running a command without network access: a small immutable builder that
 * turns a request into the argv that is actually spawned, in the manner of Bazel's
 * sandbox command-line builders. Implementations are pure functions of their inputs and
 * of the facts about the host they were given when they were built; nothing here touches
 * the host, so every command line is unit-testable on any operating system. Whether a
 * mechanism works on a host is decided by the {@code NetworkIsolationProbe}, which runs
 * the real command line once.
 * <p>
 * To add a mechanism: implement this interface in this package, and teach the probe to
 * build and verify it.
 */
public sealed interface SandboxMechanism
		permits BubblewrapMechanism, UnshareMechanism, NamespacesMechanism, SeccompMechanism, SandboxExecMechanism {

	/**
	 * Return the name of this mechanism, as reported in results, health and logs: the
	 * name of its {@link dev.cavesandbox.MechanismChoice} in lower case, with {@code -}
	 * for {@code _}.
	 * @return the name
	 */
	String name();

	/**
	 * Return the command line that runs {@code argv} in the sandbox.
	 * @param argv the command and its arguments, at least one element
	 * @param workingDirectory the command's working directory, an absolute path without
	 * symbolic links; it stays visible and writable inside the sandbox, even where it
	 * lies in a hidden directory
	 * @param loopback whether the command gets a private, working loopback interface
	 * @return the command line to spawn, in that working directory
	 * @throws IllegalArgumentException if loopback is requested but this mechanism cannot
	 * provide a private one
	 */
	default List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback) {
		return commandLine(argv, workingDirectory, loopback, false);
	}

	/**
	 * Return the command line of {@link #commandLine(List, Path, boolean)}, with the
	 * launcher's report of its refusals on stdout before the command runs when
	 * {@code check} is set (the probe).
	 * @param argv the command and its arguments, at least one element
	 * @param workingDirectory the command's working directory, as above
	 * @param loopback whether the command gets a private, working loopback interface
	 * @param check whether the launcher reports its refusals (no effect without one)
	 * @return the command line to spawn
	 * @throws IllegalArgumentException if loopback is requested but this mechanism cannot
	 * provide a private one
	 */
	default List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback, boolean check) {
		return commandLine(argv, workingDirectory, loopback, check, ResourceLimits.NONE);
	}

	/**
	 * Return the command line of {@link #commandLine(List, Path, boolean, boolean)}, with
	 * the command's resource limits: the launcher sets the rlimits, and the mechanism
	 * sizes the private tmpfs mounts where it has them.
	 * @param argv the command and its arguments, at least one element
	 * @param workingDirectory the command's working directory, as above
	 * @param loopback whether the command gets a private, working loopback interface
	 * @param check whether the launcher reports its refusals (no effect without one)
	 * @param limits the resource limits; {@link ResourceLimits#NONE} for none
	 * @return the command line to spawn
	 * @throws IllegalArgumentException if loopback is requested but this mechanism cannot
	 * provide a private one
	 */
	List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback, boolean check,
			ResourceLimits limits);

	/**
	 * Return the native launcher this mechanism runs the command through.
	 * @return the launcher, or {@code null} where the mechanism has none (macOS)
	 */
	default @Nullable Launcher launcher() {
		return null;
	}

	/**
	 * Return the Linux namespaces this mechanism gives the command, each of which the
	 * probe verifies.
	 * @return the namespaces; empty where there are none (the seccomp mechanism, macOS)
	 */
	default Set<LinuxNamespace> namespaces() {
		return Set.of();
	}

	/**
	 * Return the host binaries that must exist and be executable.
	 * @return the binaries
	 */
	List<Path> binaries();

	/**
	 * Return whether this mechanism can give the command a private loopback interface
	 * that is up, and cannot reach the host's loopback.
	 * @return whether {@code loopback} may be {@code true}
	 */
	boolean supportsPrivateLoopback();

	/**
	 * Return whether the given host path is hidden inside the sandbox (it lies in a
	 * hidden directory), unless it is also in the command's working directory.
	 * @param path an absolute path without symbolic links
	 * @return whether the command cannot see the path
	 */
	default boolean hides(Path path) {
		return false;
	}

	/**
	 * Return this mechanism with the egress bridge of one execution
	 * ({@link Launcher.Egress}): its launcher opens the egress directory outside and
	 * listens on the command's private loopback inside.
	 * @param egress the bridge
	 * @return the mechanism
	 * @throws IllegalArgumentException where the mechanism has no network namespace of
	 * its own (the seccomp mechanism, sandbox-exec)
	 */
	default SandboxMechanism withEgress(Launcher.Egress egress) {
		throw new IllegalArgumentException("the " + name() + " mechanism has no network namespace of its own, so it "
				+ "cannot give the command an egress bridge on a private loopback");
	}

	/**
	 * Return this mechanism with more host paths shown to the command: those of a
	 * request, besides the view's own ({@link FilesystemView#withPaths(List, List)}).
	 * @param readable absolute real paths shown read-only
	 * @param writable absolute real paths shown writable
	 * @return the mechanism, or this one when both are empty
	 * @throws IllegalArgumentException if this mechanism cannot show listed paths
	 */
	default SandboxMechanism withPaths(List<Path> readable, List<Path> writable) {
		if (readable.isEmpty() && writable.isEmpty()) {
			return this;
		}
		throw new IllegalArgumentException("the " + name() + " mechanism cannot show listed paths to the command");
	}

}
