package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Syscall-heavy workloads through the executor on every mechanism that the probe verifies
 * here, side by side in one fork: in each round, in an order shuffled anew (a fixed
 * seed), each workload on each mechanism and on none (a plain {@link ProcessBuilder}
 * spawn of the same shell line). What a supervisor of system calls costs the programs
 * that do not use them shows as a change of these medians between two builds run
 * alternately (BENCHMARKS.md). Prints one line per variant: the median time (ms) over the
 * rounds and the median of each round's ratio to the plain spawn.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class WorkloadBenchmark {

	private static final List<String> MECHANISMS = List.of("bwrap", "unshare", "namespaces", "seccomp");

	/** The workloads: a name and a shell line, run with /bin/sh -c. */
	private static final Map<String, String> WORKLOADS = Map.of("find", "find /usr/lib /usr/share -type f | wc -l",
			"python-import",
			"/usr/bin/python3 -c 'import asyncio, email.mime.multipart, json, decimal, xml.dom.minidom, http.client,"
					+ " sqlite3, unittest, argparse, logging.handlers, concurrent.futures'");

	@Param("20")
	public int rounds;

	private final Map<String, IsolatedExecutor> executors = new LinkedHashMap<>();

	private Path directory;

	private final Random random = new Random(28);

	@Setup
	public void setUp() throws IOException {
		this.directory = Files.createTempDirectory("cave-sandbox-workload-").toRealPath();
		for (String choice : MECHANISMS) {
			try {
				BenchmarkMechanism mechanism = BenchmarkMechanism.resolve(choice);
				this.executors.put(choice, mechanism.executor(mechanism.settings()));
			}
			catch (IllegalStateException ex) {
				System.out.println("# skipping mechanism " + choice + ": " + ex.getMessage());
			}
		}
	}

	@Benchmark
	public double workloads() throws Exception {
		List<String> variants = new ArrayList<>();
		for (String workload : WORKLOADS.keySet()) {
			variants.add(workload + " plain");
			this.executors.keySet().forEach((mechanism) -> variants.add(workload + " " + mechanism));
		}
		Collections.sort(variants);
		Map<String, long[]> times = new LinkedHashMap<>();
		variants.forEach((variant) -> times.put(variant, new long[this.rounds]));
		for (int i = 0; i < this.rounds; i++) {
			Collections.shuffle(variants, this.random);
			for (String variant : variants) {
				times.get(variant)[i] = run(variant);
			}
		}
		times.keySet().stream().sorted().forEach((variant) -> {
			String plain = variant.substring(0, variant.indexOf(' ')) + " plain";
			System.out.printf("%n# workload %-28s median %8.1f ms, over plain %.3f%n", variant,
					Rounds.median(times.get(variant)) / 1e6, Rounds.medianRatio(times.get(variant), times.get(plain)));
		});
		return 0;
	}

	private long run(String variant) throws Exception {
		String workload = variant.substring(0, variant.indexOf(' '));
		String mechanism = variant.substring(variant.indexOf(' ') + 1);
		String line = WORKLOADS.get(workload);
		long start = System.nanoTime();
		if (mechanism.equals("plain")) {
			int exit = BenchmarkMechanism.Raw.run(List.of("/bin/sh", "-c", line + " >/dev/null"), this.directory);
			if (exit != 0) {
				throw new IllegalStateException(variant + " exited " + exit);
			}
		}
		else {
			ExecutionResult result = this.executors.get(mechanism)
				.execute(ExecutionRequest.builder("/bin/sh", "-c", line).timeout(Duration.ofMinutes(2)).build());
			if (!result.succeeded()) {
				throw new IllegalStateException(variant + ": " + result + ": " + result.stderrText());
			}
		}
		return System.nanoTime() - start;
	}

	@TearDown
	public void tearDown() throws IOException {
		for (IsolatedExecutor executor : this.executors.values()) {
			executor.close();
		}
		Files.deleteIfExists(this.directory);
	}

}
