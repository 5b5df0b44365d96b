package dev.cavesandbox.benchmarks;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.WarmPoolState;

/**
 * The variants of {@link PeersBenchmark} that run here, each checked once on every
 * workload before it is timed; a peer that is missing or fails is skipped with a line
 * that says why. Every command line is built once, before the rounds.
 * <ul>
 * <li>{@code plain}: the argv itself, from {@link ProcessBuilder}.</li>
 * <li>{@code bwrap-by-hand}: {@code bwrap --unshare-all --die-with-parent}, {@code /usr}
 * and the system links ({@code /bin}, {@code /lib}, ... as the host has them: links, or
 * directories bound read-only) read-only, {@code --proc /proc --dev /dev --tmpfs /tmp},
 * and the peer's directory bound as the working directory.</li>
 * <li>{@code bwrap-equivalent}: the bwrap rung's own command line without the launcher
 * ({@link BenchmarkMechanism#commandLineWithoutLauncher}: its view, masks and hidden
 * directories, bwrap's own PID 1).</li>
 * <li>{@code firejail}: {@code firejail --quiet --noprofile --net=none}.</li>
 * <li>{@code srt}: Anthropic's sandbox-runtime, {@code srt --settings FILE -c COMMAND},
 * with a settings file that allows no domain and lets the peer's directory be
 * written.</li>
 * <li>{@code executor-RUNG}: {@code IsolatedExecutor.execute} with the defaults and the
 * mechanism set to each rung the probe verifies here (bwrap, unshare, namespaces,
 * seccomp), a private working directory with the input file, the output file taken back:
 * the cold path ({@code cave.sandbox.warm.size=0}).</li>
 * <li>{@code executor-RUNG-warm}: the same with a pool of one warm sandbox
 * ({@code cave.sandbox.warm.size=1}); every timed execution must take it (a miss fails
 * the run), and {@link #settle(List)} waits before each timed run until every pool is
 * full again, so that no pool's preparation runs while another variant is timed.</li>
 * </ul>
 */
final class PeerVariants {

	private static final List<String> RUNGS = List.of("bwrap", "unshare", "namespaces", "seccomp");

	private static final Path BWRAP = Path.of("/usr/bin/bwrap");

	private static final WarmPoolSettings WARM = new WarmPoolSettings(1,
			Duration.ofSeconds(WarmPoolSettings.DEFAULT_MAX_AGE_SECONDS));

	private static final Path FIREJAIL = Path.of("/usr/bin/firejail");

	private static final List<String> SYSTEM_LINKS = List.of("bin", "lib", "lib32", "lib64", "libx32", "sbin");

	private PeerVariants() {
	}

	/** One way of running a workload. */
	interface Variant extends AutoCloseable {

		String name();

		void run(PeerWorkload workload) throws Exception;

		@Override
		default void close() {
		}

	}

	/**
	 * Return the variants that run every workload here, {@code plain} first.
	 * @param workloads the workloads
	 * @param root where each peer gets a working directory of its own
	 * @return the variants
	 * @throws IllegalStateException if an executor of a verified rung fails a workload
	 */
	static List<Variant> available(List<PeerWorkload> workloads, Path root) throws Exception {
		List<Variant> variants = new ArrayList<>();
		Map<String, BenchmarkMechanism> rungs = new LinkedHashMap<>();
		for (String rung : RUNGS) {
			try {
				rungs.put(rung, BenchmarkMechanism.resolve(rung));
			}
			catch (IllegalStateException ex) {
				System.out.println("# skipping executor-" + rung + ": " + ex.getMessage());
			}
		}
		addPeer(variants, workloads, root, "plain", null, (directory) -> (argv) -> argv);
		addPeer(variants, workloads, root, "bwrap-by-hand",
				Files.isExecutable(BWRAP) ? null : BWRAP + " is missing " + "(apt-get install bubblewrap)",
				(directory) -> (argv) -> bwrapByHand(directory, argv));
		BenchmarkMechanism bwrap = rungs.get("bwrap");
		addPeer(variants, workloads, root, "bwrap-equivalent",
				(bwrap != null) ? null : "the bwrap rung is not verified here",
				(directory) -> (argv) -> bwrap.commandLineWithoutLauncher(directory, argv.toArray(String[]::new)));
		addPeer(variants, workloads, root, "firejail",
				Files.isExecutable(FIREJAIL) ? null : FIREJAIL + " is missing (apt-get install firejail)",
				(directory) -> (argv) -> firejail(argv));
		Path srt = onPath("srt");
		addPeer(variants, workloads, root, "srt", (srt != null) ? null : "no srt on the PATH (npm install -g "
				+ "@anthropic-ai/sandbox-runtime@0.0.83; it needs ripgrep and socat)", (directory) -> {
					Path settings = srtSettings(directory);
					return (argv) -> List.of(srt.toString(), "--settings", settings.toString(), "-c", quoted(argv));
				});
		for (Map.Entry<String, BenchmarkMechanism> rung : rungs.entrySet()) {
			BenchmarkMechanism mechanism = rung.getValue();
			variants.add(new Executor("executor-" + rung.getKey(), mechanism.executor(mechanism.settings()), workloads,
					false));
		}
		for (Map.Entry<String, BenchmarkMechanism> rung : rungs.entrySet()) {
			BenchmarkMechanism mechanism = rung.getValue();
			SandboxSettings warm = mechanism.settings(WARM);
			variants
				.add(new Executor("executor-" + rung.getKey() + "-warm", mechanism.executor(warm), workloads, true));
		}
		for (Variant variant : variants) {
			if (variant instanceof Executor) {
				for (PeerWorkload workload : workloads) {
					settle(variants);
					variant.run(workload);
				}
			}
		}
		return variants;
	}

	/**
	 * Wait until the pool of every warm variant is full, at most 10 s each.
	 * @param variants the variants
	 * @throws IllegalStateException if a pool is not full in time (its state says why)
	 */
	static void settle(List<Variant> variants) throws InterruptedException {
		for (Variant variant : variants) {
			if (variant instanceof Executor executor && executor.warm) {
				long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
				WarmPoolState state = executor.executor.warmPool();
				while (state.ready() < state.size()) {
					if (System.nanoTime() > deadline) {
						throw new IllegalStateException(executor.name + "'s pool is not full after 10 s: " + state);
					}
					Thread.sleep(1);
					state = executor.executor.warmPool();
				}
			}
		}
	}

	/** A command line around the argv, for the peer's directory. */
	private interface Wrapper {

		Function<List<String>, List<String>> around(Path directory) throws IOException;

	}

	/**
	 * Add a peer that is there ({@code missing} is {@code null}) and runs every workload
	 * in its directory; print why not otherwise.
	 */
	private static void addPeer(List<Variant> variants, List<PeerWorkload> workloads, Path root, String name,
			String missing, Wrapper wrapper) throws IOException {
		if (missing != null) {
			System.out.println("# skipping peer " + name + ": " + missing);
			return;
		}
		Path directory = Files.createDirectory(root.resolve(name));
		Map<String, List<String>> commandLines = new LinkedHashMap<>();
		try {
			Function<List<String>, List<String>> wrap = wrapper.around(directory);
			for (PeerWorkload workload : workloads) {
				workload.prepare(directory);
				Files.deleteIfExists(directory.resolve(PeerWorkload.OUTPUT));
				List<String> commandLine = List.copyOf(wrap.apply(workload.argv()));
				BenchmarkMechanism.Raw.run(commandLine, directory);
				if (!workload.wroteOutput(directory)) {
					throw new IllegalStateException(workload.name() + " wrote no " + PeerWorkload.OUTPUT);
				}
				commandLines.put(workload.name(), commandLine);
			}
		}
		catch (IOException | InterruptedException | RuntimeException ex) {
			System.out.println("# skipping peer " + name + ": it does not run here: " + ex.getMessage());
			return;
		}
		variants.add(new Peer(name, directory, commandLines));
	}

	private static List<String> bwrapByHand(Path directory, List<String> argv) {
		List<String> command = new ArrayList<>(
				List.of(BWRAP.toString(), "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"));
		for (String name : SYSTEM_LINKS) {
			Path link = Path.of("/", name);
			try {
				if (Files.isSymbolicLink(link)) {
					command.addAll(List.of("--symlink", Files.readSymbolicLink(link).toString(), link.toString()));
				}
				else if (Files.isDirectory(link)) {
					command.addAll(List.of("--ro-bind", link.toString(), link.toString()));
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException("cannot read " + link + ": " + ex.getMessage(), ex);
			}
		}
		command.addAll(List.of("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", directory.toString(),
				directory.toString(), "--chdir", directory.toString(), "--"));
		command.addAll(argv);
		return command;
	}

	private static List<String> firejail(List<String> argv) {
		List<String> command = new ArrayList<>(
				List.of(FIREJAIL.toString(), "--quiet", "--noprofile", "--net=none", "--"));
		command.addAll(argv);
		return command;
	}

	/** A settings file of srt that allows no domain and the directory to be written. */
	private static Path srtSettings(Path directory) throws IOException {
		return Files.writeString(directory.resolveSibling("srt-settings.json"), """
				{"filesystem": {"denyRead": [], "allowWrite": ["%s"], "denyWrite": []},
				 "network": {"allowedDomains": [], "deniedDomains": []}}
				""".formatted(directory));
	}

	/** The argv as one shell command, each word in single quotes. */
	private static String quoted(List<String> argv) {
		return String.join(" ", argv.stream().map((word) -> "'" + word.replace("'", "'\\''") + "'").toList());
	}

	private static Path onPath(String program) {
		for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
			Path candidate = Path.of(directory.isEmpty() ? "." : directory, program);
			if (Files.isExecutable(candidate)) {
				return candidate;
			}
		}
		return null;
	}

	/** A peer: its command line of each workload, spawned in its directory. */
	private record Peer(String name, Path directory, Map<String, List<String>> commandLines) implements Variant {

		@Override
		public void run(PeerWorkload workload) throws Exception {
			BenchmarkMechanism.Raw.run(this.commandLines.get(workload.name()), this.directory);
		}

	}

	/** The executor on one rung, with the request of each workload. */
	private static final class Executor implements Variant {

		private final String name;

		private final IsolatedExecutor executor;

		private final Map<String, ExecutionRequest> requests = new LinkedHashMap<>();

		private final boolean warm;

		Executor(String name, IsolatedExecutor executor, List<PeerWorkload> workloads, boolean warm) {
			this.name = name;
			this.executor = executor;
			this.warm = warm;
			workloads.forEach((workload) -> this.requests.put(workload.name(), workload.request()));
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public void run(PeerWorkload workload) {
			ExecutionResult result = this.executor.execute(this.requests.get(workload.name()));
			workload.check(result);
			if (result.warm() != this.warm) {
				throw new IllegalStateException(
						this.name + " ran " + (result.warm() ? "warm" : "cold") + ": " + this.executor.warmPool());
			}
		}

		@Override
		public void close() {
			this.executor.close();
		}

	}

}
