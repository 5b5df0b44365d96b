package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.workspace.PrivateHome;
import dev.cavesandbox.internal.workspace.ViewResolver;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
import org.jspecify.annotations.Nullable;

/**
 * The checks of the paths a request gives an isolated command: its own working directory,
 * its listed readable and writable paths, and its command, against what the sandbox hides
 * or must keep from the command (hidden directories, secrets of the system view, the
 * homes of the private working directories, the directories the sandbox's own programs
 * come from). Each refusal is an {@link InvalidExecutionRequestException}
 * ({@code cave_sandbox_invalid_request}) or a {@link CommandNotFoundException}.
 */
final class SandboxPaths {

	private final SandboxSettings settings;

	/**
	 * The directories the sandbox's programs come from, as real paths: see
	 * {@link #programDirectories(SandboxMechanism)}.
	 */
	private final List<Path> programDirectories;

	SandboxPaths(SandboxSettings settings, SandboxMechanism mechanism) {
		this.settings = settings;
		this.programDirectories = programDirectories(mechanism);
	}

	/**
	 * Check a working directory of the request's own. It is mounted writable into the
	 * sandbox, over the hidden directories and the read-only root, so it must be the path
	 * the caller meant: no symbolic link anywhere in it (an earlier, untrusted execution
	 * could have planted one in a persistent directory to point the mount at {@code /} or
	 * {@code /run}), and neither the root nor a directory that holds a hidden directory,
	 * a secret, a home of the private working directories or the sandbox's programs.
	 * @param directory the request's directory, which exists
	 * @return the checked real path, which the mechanism binds
	 */
	Path checkWorkingDirectory(Path directory) {
		Path absolute = directory.toAbsolutePath().normalize();
		Path real;
		try {
			real = directory.toRealPath();
		}
		catch (IOException ex) {
			throw new InvalidExecutionRequestException("working directory " + directory + " cannot be resolved: " + ex);
		}
		if (!real.equals(absolute)) {
			throw new InvalidExecutionRequestException(
					"working directory " + directory + " goes through a symbolic link (it" + " resolves to " + real
							+ "); pass the real path if that is the directory you mean");
		}
		boolean containsHidden = real.getParent() == null || this.settings.hiddenDirectories()
			.stream()
			.anyMatch((hidden) -> hidden.toAbsolutePath().normalize().startsWith(real));
		if (containsHidden) {
			throw new InvalidExecutionRequestException(
					"working directory " + real + " is the root or contains a hidden "
							+ "directory (hiddenDirectories), which it would uncover; use a directory of its own");
		}
		Path secret = ViewResolver.secretAround(real, true);
		if (secret != null) {
			throw new InvalidExecutionRequestException(
					"working directory " + real + ((real.startsWith(secret)) ? " lies in " : " holds ") + secret
							+ ", a secret that the system view masks; use a directory of its own");
		}
		Path home = PrivateHome.touchedBy(real);
		if (home != null) {
			throw new InvalidExecutionRequestException("working directory " + real
					+ ((real.startsWith(home)) ? " lies in " : " contains ") + home
					+ ", a home of the private working directories and of the launcher, which the sandbox hides; "
					+ "use a directory of its own");
		}
		// A command of a root JVM owns the system's programs: given their directory as
		// its (writable) working directory, it could replace what later sandboxes run.
		for (Path programs : this.programDirectories) {
			if (programs.startsWith(real) || real.startsWith(programs)) {
				throw new InvalidExecutionRequestException("working directory " + real
						+ ((real.startsWith(programs)) ? " lies in " : " contains ") + programs
						+ ", where the sandbox's own programs come from; use a directory of its own");
			}
		}
		return real;
	}

	/**
	 * Return the mechanism with the request's listed paths (each checked: existing, real,
	 * not the sandbox's private directories), after refusing any writable path, of the
	 * request or the settings, that is or holds a directory the sandbox's own programs
	 * come from (a root JVM's command could replace them).
	 * @param mechanism the verified mechanism
	 * @param request the request
	 * @return the mechanism with the listed paths
	 */
	SandboxMechanism withListedPaths(SandboxMechanism mechanism, ExecutionRequest request) {
		List<Path> readable = request.readablePaths()
			.stream()
			.map((path) -> ViewResolver.checkRequested("readable path", path))
			.toList();
		List<Path> writable = request.writablePaths()
			.stream()
			.map((path) -> ViewResolver.checkRequested("writable path", path))
			.toList();
		List<Path> allWritable = new ArrayList<>(writable);
		allWritable.addAll(this.settings.filesystem().writablePaths());
		for (Path path : allWritable) {
			for (Path programs : this.programDirectories) {
				if (programs.startsWith(path) || path.startsWith(programs)) {
					throw new InvalidExecutionRequestException(
							"writable path " + path + ((path.startsWith(programs)) ? " lies in " : " holds ") + programs
									+ ", where the sandbox's own programs come from; list it as a readable path or use "
									+ "another directory");
				}
			}
		}
		try {
			return mechanism.withPaths(readable, writable);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidExecutionRequestException(
					ex.getMessage() + "; leave readablePaths and writablePaths " + "empty on this platform");
		}
	}

	/**
	 * Refuse a command in a hidden directory (for example a script in {@code /tmp}): it
	 * exists on the host but not in the sandbox. Reported as not found before anything is
	 * spawned, the same way for every mechanism, rather than with the wrapper's own exit
	 * code.
	 * @param mechanism the mechanism the command runs under
	 * @param command the resolved command
	 * @param realDirectory the working directory's real path, which the sandbox shows
	 * @throws IOException if the command's real path cannot be read
	 */
	static void checkVisible(SandboxMechanism mechanism, Path command, Path realDirectory) throws IOException {
		Path real = command.toRealPath();
		if (mechanism.hides(real) && !real.startsWith(realDirectory)) {
			throw new CommandNotFoundException("command " + command + " lies outside what the sandbox shows the "
					+ "command (a hidden directory, or outside the system view's directories): put it in the working "
					+ "directory, or list its directory in cave.sandbox.filesystem.readable-paths or the request's "
					+ "readablePaths (a listed path the view left out, such as one through a symbolic link, is named "
					+ "in the verified facts)");
		}
	}

	/**
	 * The directories the sandbox's programs come from: the launcher's, the wrapper
	 * binaries', and those of the baseline {@code PATH} on which the wrappers find
	 * {@code sh}, {@code mount} and {@code setsid}; as real paths.
	 */
	private static List<Path> programDirectories(SandboxMechanism mechanism) {
		List<Path> directories = new ArrayList<>();
		List<Path> programs = new ArrayList<>(mechanism.binaries());
		for (String entry : SandboxSettings.BASELINE_PATH.split(":")) {
			programs.add(Path.of(entry, "sh"));
		}
		for (Path program : programs) {
			@Nullable Path directory = realParent(program);
			if (directory != null && !directories.contains(directory)) {
				directories.add(directory);
			}
		}
		return directories;
	}

	private static @Nullable Path realParent(Path program) {
		try {
			return program.toAbsolutePath().getParent().toRealPath();
		}
		catch (IOException ex) {
			// Not on this host: nothing there to protect.
			return null;
		}
	}

	/**
	 * Hand the working directory's group to the command user where the command runs as a
	 * uid of the host without capabilities (the seccomp mechanism with a command user),
	 * which could not write it otherwise; see {@link WorkingDirectoryGrant}. Executions
	 * that overlap in one directory share the grant.
	 * @param realDirectory the working directory's real path
	 * @param group the command user's gid, or {@code Launcher.CALLER}
	 * @return the grant, or {@code null} where none is needed
	 */
	static @Nullable WorkingDirectoryGrant grantToCommandUser(Path realDirectory, long group) {
		if (group < 0) {
			return null;
		}
		try {
			Path unpassable = WorkingDirectoryGrant.unpassableAncestor(realDirectory, group);
			if (unpassable != null) {
				throw new InvalidExecutionRequestException("working directory " + realDirectory
						+ " cannot be reached by the command user " + group + ": it may not pass through " + unpassable
						+ " (the seccomp mechanism runs a root JVM's commands as that uid of the host, which reaches its "
						+ "directory by its path); give others search permission (chmod o+x) on " + unpassable
						+ ", use a directory below one it can pass, or set cave.sandbox.linux.command-user=0 (the "
						+ "process limit then does not hold)");
			}
			return WorkingDirectoryGrant.grant(realDirectory, group);
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not give the working directory " + realDirectory
					+ " to the command user's group " + group + ", the command did not run: " + ex.getMessage(), ex);
		}
	}

}
