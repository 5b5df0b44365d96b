package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;

/**
 * A mechanism as the benchmarks see it: the exact command line that the executor spawns
 * for an argv in a working directory (the "raw" floor), and the executor over the same
 * verified capability. Every benchmark takes the mechanism as a {@code @Param}.
 * <ul>
 * <li>{@code none}: the argv itself (plain {@code ProcessBuilder}) and the unisolated
 * executor.</li>
 * <li>{@code unshare}, {@code bwrap}: the mechanism that {@link NetworkIsolationProbe}
 * verified on this host with {@code cave.sandbox.mechanism} set to it; its command line
 * comes from {@code capability.mechanism().commandLine(...)}, as in the executor.</li>
 * </ul>
 * {@link #commandLineWithoutLauncher(Path, String...)} derives from that command line the
 * same wrapper without the native {@link Launcher}, to measure what the launcher adds,
 * where there is such a wrapper ({@link #hasLineWithoutLauncher()}): for {@code none} and
 * {@code bwrap}, not for the mechanisms whose sandbox the launcher builds itself.
 *
 * @param name the parameter value
 * @param choice the mechanism setting, {@code null} for {@code none}
 * @param capability the verified capability, {@code null} for {@code none}
 */
record BenchmarkMechanism(String name, MechanismChoice choice, IsolationCapability capability) {

	/**
	 * Resolve a mechanism on this host.
	 * @param name {@code none}, {@code unshare}, {@code bwrap}, {@code namespaces} or
	 * {@code seccomp}
	 * @return the mechanism
	 * @throws IllegalStateException if it is not available here (the message says why)
	 */
	static BenchmarkMechanism resolve(String name) {
		MechanismChoice choice = switch (name) {
			case "none" -> null;
			case "unshare" -> MechanismChoice.UNSHARE;
			case "bwrap" -> MechanismChoice.BWRAP;
			case "namespaces" -> MechanismChoice.NAMESPACES;
			case "seccomp" -> MechanismChoice.SECCOMP;
			default -> throw new IllegalArgumentException(
					"unknown mechanism " + name + "; use none, unshare, bwrap, namespaces or seccomp");
		};
		if (choice == null) {
			return new BenchmarkMechanism(name, null, null);
		}
		IsolationCapability capability = new NetworkIsolationProbe(SandboxSettings.builder().mechanism(choice).build())
			.probe();
		if (!capability.available()) {
			throw new IllegalStateException(name + " is not available here: " + capability);
		}
		return new BenchmarkMechanism(name, choice, capability);
	}

	/**
	 * Return the mechanisms that work on this host, with {@code none} first; print why
	 * others are skipped.
	 * @return the names
	 */
	static List<String> available() {
		List<String> names = new ArrayList<>();
		for (String name : List.of("none", "unshare", "bwrap")) {
			try {
				resolve(name);
				names.add(name);
			}
			catch (IllegalStateException ex) {
				System.out.println("# skipping mechanism " + name + ": " + ex.getMessage());
			}
		}
		return names;
	}

	/**
	 * Return the command line that the executor spawns for the argv in the working
	 * directory.
	 * @param workingDirectory the working directory of the spawn
	 * @param argv the command
	 * @return the whole command line
	 */
	List<String> commandLine(Path workingDirectory, String... argv) {
		if (this.capability == null) {
			return List.of(argv);
		}
		try {
			return this.capability.mechanism().commandLine(List.of(argv), workingDirectory.toRealPath(), false);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Return whether the mechanism has a command line without the native launcher
	 * ({@link #commandLineWithoutLauncher(Path, String...)}): {@code true} for
	 * {@code none} and {@code bwrap}. {@code unshare} has none since the launcher's
	 * {@value LauncherContract#ROOT} mode, PID 1 of its namespaces, makes its mounts
	 * itself ({@code UnshareMountPlan}; before, a shell script of mount(8) calls did); in
	 * {@code namespaces} the launcher is PID 1 as well, and in {@code seccomp} it is the
	 * only wrapper. Benchmarks skip their without-launcher variant for those.
	 * @param name the mechanism's name, as {@link #resolve(String)} takes it
	 * @return whether there is such a command line
	 */
	static boolean hasLineWithoutLauncher(String name) {
		return name.equals("none") || name.equals("bwrap");
	}

	/**
	 * Return whether this mechanism has a command line without the native launcher, as
	 * {@link #hasLineWithoutLauncher(String)}.
	 * @return whether there is such a command line
	 */
	boolean hasLineWithoutLauncher() {
		return hasLineWithoutLauncher(this.name);
	}

	/**
	 * Return what a report prints in place of a figure without the launcher for a
	 * mechanism that has no command line without it
	 * ({@link #hasLineWithoutLauncher(String)}), such as
	 * {@code n/a (the launcher makes unshare's mounts)}.
	 * @param name the mechanism's name
	 * @return the words, {@code n/a} and the reason in brackets
	 */
	static String withoutLauncherNotApplicable(String name) {
		return "n/a (" + whyNoLineWithoutLauncher(name) + ")";
	}

	private static String whyNoLineWithoutLauncher(String name) {
		return switch (name) {
			case "unshare" -> "the launcher makes unshare's mounts";
			case "namespaces" -> "the launcher is PID 1 of namespaces";
			default -> "the launcher is " + name + "'s only wrapper";
		};
	}

	/**
	 * Return the mechanism's command line for the argv in the working directory without
	 * the native launcher, derived from {@link #commandLine(Path, String...)}: the
	 * {@code outer --workdir DIR [options] --} prefix and the inner
	 * {@code /proc/self/fd/4 init|exec [options] --} are dropped (for a root JVM with
	 * them the command user's user namespace that {@code outer} makes, so the wrapper
	 * runs as root in the host's); for bubblewrap, {@code --bind-fd 3 DIR} becomes
	 * {@code --bind DIR DIR} and {@code --as-pid-1} goes (bwrap's own init is PID 1
	 * again). Only for a mechanism that {@link #hasLineWithoutLauncher() has one}:
	 * {@code none} and {@code bwrap}. Not a sandbox to rely on: the working directory's
	 * path is resolved again and nothing is confined inside. Spawn it with the working
	 * directory as the process's directory.
	 * @param workingDirectory the working directory of the spawn
	 * @param argv the command
	 * @return the whole command line, for {@code none} the argv itself
	 * @throws IllegalStateException if the mechanism has no command line without the
	 * launcher (the message says why), or if bubblewrap's is not shaped as expected
	 */
	List<String> commandLineWithoutLauncher(Path workingDirectory, String... argv) {
		if (!hasLineWithoutLauncher()) {
			throw new IllegalStateException(this.name + " has no command line without the native launcher: "
					+ whyNoLineWithoutLauncher(this.name) + ", so no wrapper is left to spawn without it; "
					+ "check hasLineWithoutLauncher() first, or leave " + this.name + " out (-p mechanism=none,bwrap)");
		}
		if (this.capability == null) {
			return List.of(argv);
		}
		List<String> command = new ArrayList<>(commandLine(workingDirectory, argv));
		int outerEnd = command.indexOf("--");
		expect(outerEnd >= 4 && command.get(1).equals("outer") && command.get(2).equals("--workdir"),
				"an outer --workdir DIR [OPTION...] -- prefix", command);
		String launcher = command.get(0);
		String directory = command.get(3);
		command.subList(0, outerEnd + 1).clear();
		int inside = command.indexOf(LauncherContract.INSIDE);
		int end = (inside >= 0) ? command.subList(inside, command.size()).indexOf("--") : -1;
		expect(end > 0 && List.of("init", "exec").contains(command.get(inside + 1)),
				LauncherContract.INSIDE + " init|exec ... --", command);
		command.subList(inside, inside + end + 1).clear();
		expect(this.capability.mechanism() instanceof BubblewrapMechanism, "bubblewrap", command);
		int bind = command.indexOf("--bind-fd");
		expect(bind >= 0 && command.get(bind + 1).equals(String.valueOf(LauncherContract.DIRECTORY_FD))
				&& command.get(bind + 2).equals(directory), "--bind-fd 3 DIR", command);
		command.subList(bind, bind + 3).clear();
		command.addAll(bind, List.of("--bind", directory, directory));
		expect(command.remove("--as-pid-1"), "--as-pid-1", command);
		expect(!command.contains(launcher) && !command.contains(LauncherContract.INSIDE), "no launcher left", command);
		return command;
	}

	private static void expect(boolean condition, String what, List<String> command) {
		if (!condition) {
			throw new IllegalStateException("expected " + what + " in " + command);
		}
	}

	/**
	 * Check that {@link #commandLineWithoutLauncher(Path, String...)} really runs its
	 * command here: {@code /bin/echo} prints its word and {@code /bin/true} exits 0.
	 * @param directory the working directory
	 * @throws IllegalStateException if not, or if the mechanism has no such command line
	 * ({@link #hasLineWithoutLauncher()})
	 */
	void verifyWithoutLauncher(Path directory) throws IOException, InterruptedException {
		String marker = "cave-sandbox-without-launcher";
		Process process = new ProcessBuilder(commandLineWithoutLauncher(directory, "/bin/echo", marker))
			.directory(directory.toFile())
			.start();
		process.getOutputStream().close();
		String stdout = new String(process.getInputStream().readAllBytes());
		Raw.exited(process, process.getErrorStream().readAllBytes());
		if (!stdout.equals(marker + "\n")) {
			throw new IllegalStateException("the command line without the launcher printed '" + stdout + "'");
		}
		Raw.run(commandLineWithoutLauncher(directory, "/bin/true"), directory);
	}

	/**
	 * Return the settings of the executor: the defaults, with this mechanism.
	 * @return the settings
	 */
	SandboxSettings settings() {
		return settings(SandboxSettings.defaults().workDirectory());
	}

	/**
	 * Return the settings of the executor: the defaults, with this mechanism and the
	 * given work directory.
	 * @param workDirectory where private working directories are created
	 * @return the settings
	 */
	SandboxSettings settings(Path workDirectory) {
		return settings(workDirectory, WarmPoolSettings.OFF);
	}

	/**
	 * Return the settings of the executor: the defaults, with this mechanism and a pool
	 * of warm sandboxes.
	 * @param warm the pool ({@link WarmPoolSettings#OFF}: the cold path only)
	 * @return the settings
	 */
	SandboxSettings settings(WarmPoolSettings warm) {
		return settings(SandboxSettings.defaults().workDirectory(), warm);
	}

	private SandboxSettings settings(Path workDirectory, WarmPoolSettings warm) {
		SandboxSettings.Builder builder = SandboxSettings.builder().workDirectory(workDirectory).warm(warm);
		return (this.choice != null) ? builder.mechanism(this.choice).build() : builder.build();
	}

	/**
	 * Build an executor over the same capability.
	 * @param settings the settings
	 * @return the executor
	 */
	IsolatedExecutor executor(SandboxSettings settings) {
		return (this.capability != null) ? ProcessIsolatedExecutor.isolated(settings, this.capability)
				: ProcessIsolatedExecutor.unisolated(settings);
	}

	/**
	 * Spawning without the executor.
	 */
	static final class Raw {

		private Raw() {
		}

		/**
		 * Spawn in the given directory, read both streams to their end, wait: what a
		 * caller of {@link ProcessBuilder} does at least.
		 * @param commandLine the command line
		 * @param directory the working directory
		 * @return the exit code, always 0
		 * @throws IOException if the process could not be started
		 * @throws InterruptedException if interrupted
		 * @throws IllegalStateException if the command failed
		 */
		static int run(List<String> commandLine, Path directory) throws IOException, InterruptedException {
			Process process = new ProcessBuilder(commandLine).directory(directory.toFile()).start();
			process.getOutputStream().close();
			process.getInputStream().readAllBytes();
			byte[] stderr = process.getErrorStream().readAllBytes();
			return exited(process, stderr);
		}

		static int exited(Process process, byte[] stderr) throws IOException, InterruptedException {
			int exit = process.waitFor();
			process.getInputStream().close();
			process.getErrorStream().close();
			if (exit != 0) {
				throw new IllegalStateException("exit " + exit + ": " + new String(stderr).trim());
			}
			return exit;
		}

	}

}
