package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.ProcessIsolatedExecutor;
import dev.cavesandbox.SandboxSettings;

/**
 * A mechanism as the benchmarks see it: the exact command-line prefix that the executor puts in
 * front of every argv (the "raw" floor), and how to build the executor over it. Every benchmark
 * takes the mechanism as a {@code @Param}; adding one is one case in {@link #resolve(String)}.
 * <ul>
 * <li>{@code none}: no prefix (plain {@code ProcessBuilder}) and the unisolated executor.</li>
 * <li>{@code unshare}: the prefix that {@link NetworkIsolationProbe} verified on this host, the same
 * list the executor uses ({@link IsolationCapability#commandPrefix()}).</li>
 * <li>{@code bwrap}: bubblewrap, where {@code /usr/bin/bwrap} is installed. Until the bubblewrap
 * mechanism exists in the core, the prefix is {@link #BWRAP_PREFIX} and the executor runs it through
 * a capability that the benchmark builds itself (never used outside the benchmarks). When the core
 * gains a probed bubblewrap mechanism, take both from its capability, as for {@code unshare}.</li>
 * </ul>
 *
 * @param name the parameter value
 * @param prefix the command line put before the argv
 * @param executor builds the executor that runs behind the same prefix
 */
record BenchmarkMechanism(String name, List<String> prefix, Function<SandboxSettings, IsolatedExecutor> executor) {

	static final Path BWRAP = Path.of("/usr/bin/bwrap");

	/**
	 * Bubblewrap with the namespaces of the unshare mechanism (user, network, PID), tied to its
	 * parent, in a new session, the host filesystem read-only.
	 */
	static final List<String> BWRAP_PREFIX = List.of(BWRAP.toString(), "--die-with-parent", "--new-session",
			"--unshare-user", "--unshare-net", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--");

	/**
	 * Resolve a mechanism on this host.
	 * @param name {@code none}, {@code unshare} or {@code bwrap}
	 * @return the mechanism
	 * @throws IllegalStateException if it is not available here (the message says why)
	 */
	static BenchmarkMechanism resolve(String name) {
		SandboxSettings settings = SandboxSettings.defaults();
		switch (name) {
			case "none":
				return new BenchmarkMechanism(name, List.of(), ProcessIsolatedExecutor::unisolated);
			case "unshare": {
				IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
				if (!capability.available() || !"unshare".equals(capability.mechanism())) {
					throw new IllegalStateException("unshare is not available: " + capability);
				}
				return new BenchmarkMechanism(name, capability.commandPrefix(),
						(s) -> ProcessIsolatedExecutor.isolated(s, capability));
			}
			case "bwrap": {
				if (!Files.isExecutable(BWRAP)) {
					throw new IllegalStateException(BWRAP + " is not installed (apt-get install -y bubblewrap)");
				}
				Raw.check(BWRAP_PREFIX);
				IsolationCapability capability = IsolationCapability.available("bwrap",
						List.of("benchmark only: bubblewrap's command line, not verified by the probe"), BWRAP_PREFIX,
						Duration.ZERO);
				return new BenchmarkMechanism(name, BWRAP_PREFIX, (s) -> ProcessIsolatedExecutor.isolated(s, capability));
			}
			default:
				throw new IllegalArgumentException("unknown mechanism " + name + "; use none, unshare or bwrap");
		}
	}

	/**
	 * Return the mechanisms that work on this host, with {@code none} first; print why others are
	 * skipped.
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
	 * Return the prefix followed by the given argv.
	 * @param argv the command
	 * @return the whole command line
	 */
	List<String> commandLine(String... argv) {
		List<String> commandLine = new ArrayList<>(this.prefix);
		commandLine.addAll(List.of(argv));
		return commandLine;
	}

	/**
	 * Spawning without the executor.
	 */
	static final class Raw {

		private Raw() {
		}

		/**
		 * Spawn, read both streams to their end, wait: what a caller of {@link ProcessBuilder} does at
		 * least.
		 * @param commandLine the command line
		 * @return the exit code, always 0
		 * @throws IOException if the process could not be started
		 * @throws InterruptedException if interrupted
		 * @throws IllegalStateException if the command failed
		 */
		static int run(List<String> commandLine) throws IOException, InterruptedException {
			Process process = new ProcessBuilder(commandLine).start();
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

		static void check(List<String> prefix) {
			List<String> commandLine = new ArrayList<>(prefix);
			commandLine.add("/bin/true");
			try {
				run(commandLine);
			}
			catch (IOException ex) {
				throw new IllegalStateException(String.join(" ", commandLine) + " did not start: " + ex.getMessage(), ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("interrupted", ex);
			}
		}

	}

}
