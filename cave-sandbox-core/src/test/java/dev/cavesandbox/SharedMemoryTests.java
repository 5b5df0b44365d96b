package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * POSIX shared memory and named semaphores (issue 28) on every Linux mechanism: on
 * {@code bwrap} and {@code unshare} in the private {@code /dev/shm} tmpfs, on
 * {@code namespaces} and {@code seccomp} (no mount namespace; Landlock refuses the host's
 * {@code /dev/shm}) in the execution's own directory through the preload library
 * ({@code libcave-shm.so}, {@link SharedMemoryPreload}). Real programs: Python's
 * multiprocessing with each start method, a C program built with glibc and one with musl
 * (dynamic), node and a child JVM under the preload. And what must stay out of reach:
 * another running execution's objects, an object in the host's {@code /dev/shm}; the
 * execution's directory is gone once the executor is.
 */
@EnabledOnOs(OS.LINUX)
class SharedMemoryTests {

	private static final String PYTHON = "/usr/bin/python3";

	/** A limit for a loaded machine, not a measure. */
	private static final Duration PATIENCE = Duration.ofSeconds(120);

	/** Pool.map with each start method named by the arguments, then a SharedMemory. */
	static final String POOL = """
			import multiprocessing as mp, sys
			from multiprocessing import shared_memory
			if __name__ == "__main__":
			    for method in sys.argv[1:]:
			        with mp.get_context(method).Pool(2) as pool:
			            print(method, pool.map(abs, [1, -2]), flush=True)
			    memory = shared_memory.SharedMemory(create=True, size=16)
			    memory.buf[0] = 7
			    print("shared_memory", memory.buf[0])
			    memory.close()
			    memory.unlink()
			""";

	@TempDir
	static Path programs;

	/**
	 * The probe sees what an execution gets and says it: on the mechanisms without a
	 * mount namespace the preload library, the execution's own directory and the host's
	 * {@code /dev/shm} refused; on the others a private {@code /dev/shm} among the hidden
	 * directories.
	 */
	@ForEachLinuxMechanism
	void theProbeVerifiesSharedMemoryAndSaysHowInItsFacts(MechanismChoice mechanism) {
		List<String> facts = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(mechanism).build())
			.verified();
		String given = "POSIX shared memory and semaphores: the execution's own directory (shm_open and sem_open "
				+ "through the preload library libcave-shm.so, dynamically linked programs only); the host's /dev/shm "
				+ "refused";
		if (LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT)) {
			assertThat(facts).doesNotContain(given)
				.anySatisfy((fact) -> assertThat(fact).startsWith("hidden: ").contains("/dev/shm"));
		}
		else {
			assertThat(facts).contains(given);
		}
	}

	@ForEachLinuxMechanism
	void pythonMultiprocessingPoolWorksWithForkAndSpawn(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(PYTHON, "pool.py", "fork", "spawn")
				.inputFile("pool.py", POOL.getBytes(StandardCharsets.UTF_8))
				.timeout(PATIENCE)
				.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo("fork [1, 2]\nspawn [1, 2]\nshared_memory 7\n");
		}
	}

	/**
	 * The forkserver start method also needs a unix socket of the command's own (its
	 * server's listener under {@code TMPDIR}), which the mechanisms without a mount
	 * namespace let through their supervisor. Its children open their semaphores by name,
	 * as spawn's do (above).
	 */
	@ForEachLinuxMechanism
	void pythonMultiprocessingPoolWorksWithForkserver(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(PYTHON, "pool.py", "forkserver")
				.inputFile("pool.py", POOL.getBytes(StandardCharsets.UTF_8))
				.timeout(PATIENCE)
				.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo("forkserver [1, 2]\nshared_memory 7\n");
		}
	}

	@ForEachLinuxMechanism
	void semaphoresAndSharedMemoryWorkBetweenTheCommandsOwnProcessesWithGlibcAndMusl(MechanismChoice mechanism)
			throws Exception {
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			for (String libc : List.of("glibc", "musl")) {
				ExecutionResult result = executor.execute(run(libc, "own", "/cave-" + UUID.randomUUID()).build());
				assertThat(result.exitCode()).as("%s: %s %s", libc, result.stdoutText(), result.stderrText()).isZero();
				assertThat(result.stdoutText()).as(libc).isEqualTo("own: ok\n");
			}
		}
	}

	/**
	 * A request's own {@code LD_PRELOAD} stays first; the library follows it, and
	 * Python's semaphores still work.
	 */
	@ForEachLinuxMechanism
	void theRequestsOwnPreloadStaysAndTheLibraryFollowsIt(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			ExecutionResult result = executor.execute(
					ExecutionRequest.builder("sh", "-c", "echo \"$LD_PRELOAD\" && exec " + PYTHON + " pool.py fork")
						.environment("LD_PRELOAD", "libm.so.6")
						.inputFile("pool.py", POOL.getBytes(StandardCharsets.UTF_8))
						.timeout(PATIENCE)
						.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			List<String> lines = result.stdoutText().lines().toList();
			assertThat(lines.get(0))
				.matches(preloaded(mechanism) ? "libm\\.so\\.6:/.+/" + SharedMemoryPreload.LIBRARY : "libm\\.so\\.6");
			assertThat(lines.subList(1, lines.size())).containsExactly("fork [1, 2]", "shared_memory 7");
		}
	}

	/**
	 * The named limitation: a statically linked program has no dynamic loader to preload
	 * the library into, so its own libc's sem_open goes to the host's {@code /dev/shm},
	 * which Landlock refuses on the mechanisms without a mount namespace.
	 */
	@ForEachLinuxMechanism
	void aStaticallyLinkedProgramIsNotReachedByTheLibrary(MechanismChoice mechanism) throws Exception {
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			ExecutionResult result = executor.execute(run("static", "own", "/cave-" + UUID.randomUUID()).build());
			assertThat(result.stdoutText()).as(result.stderrText())
				.isEqualTo(preloaded(mechanism) ? "own: sem_open: EACCES\n" : "own: ok\n");
		}
	}

	@ForEachLinuxMechanism
	void nodeAndAChildJvmRunUnderThePreload(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			ExecutionResult node = executor.execute(
					ExecutionRequest.builder("node", "-e", "console.log(process.env.LD_PRELOAD ? 'preload' : 'none')")
						.timeout(PATIENCE)
						.build());
			assertThat(node.exitCode()).as(node.stderrText()).isZero();
			assertThat(node.stdoutText()).isEqualTo(preloaded(mechanism) ? "preload\n" : "none\n");
			String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
			ExecutionResult jvm = executor.execute(ExecutionRequest.builder(java, "-Xshare:off", "Hello.java")
				.inputFile("Hello.java",
						"class Hello { public static void main(String[] a) { System.out.println(42); } }"
							.getBytes(StandardCharsets.UTF_8))
				.timeout(PATIENCE)
				.build());
			assertThat(jvm.exitCode()).as(jvm.stderrText()).isZero();
			assertThat(jvm.stdoutText()).isEqualTo("42\n");
		}
	}

	/**
	 * Execution A holds a semaphore and a shared memory object with a secret; execution
	 * B, at the same time, tries them by name (it finds its own, empty, place) and by A's
	 * directory's path (refused), and an object the test made in the host's
	 * {@code /dev/shm} by name and by path: none opens.
	 */
	@ForEachLinuxMechanism
	void anotherExecutionsObjectsAndTheHostsDevShmStayOutOfReach(MechanismChoice mechanism) throws Exception {
		String name = "cave-" + UUID.randomUUID();
		String secret = "secret-" + UUID.randomUUID();
		Path hostObject = Path.of("/dev/shm", name);
		Path hostSemaphore = Path.of("/dev/shm", "sem." + name + "-sem");
		Files.writeString(hostObject, "host-" + secret);
		Files.writeString(hostSemaphore, "host-" + secret);
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			Files.setPosixFilePermissions(hostObject, PosixFilePermissions.fromString("rw-rw-rw-"));
			Files.setPosixFilePermissions(hostSemaphore, PosixFilePermissions.fromString("rw-rw-rw-"));
			SandboxedProcess holder = executor.start(run("glibc", "hold", "/" + name, secret).build());
			try {
				String held = new BufferedReader(new InputStreamReader(holder.stdout(), StandardCharsets.UTF_8))
					.readLine();
				assertThat(held).as("the holder's first line").startsWith("held ");
				String directory = held.substring("held ".length());
				assertThat(directory.equals("-")).isEqualTo(!preloaded(mechanism));
				List<String> paths = new ArrayList<>(List.of(hostObject.toString(), hostSemaphore.toString()));
				if (preloaded(mechanism)) {
					paths.add(directory + "/" + name);
					paths.add(directory + "/sem." + name + "-sem");
				}
				List<String> arguments = new ArrayList<>(List.of("reach", "/" + name));
				arguments.addAll(paths);
				ExecutionResult reach = executor.execute(run("glibc", arguments.toArray(String[]::new)).build());
				assertThat(reach.exitCode()).as(reach.stderrText()).isZero();
				assertThat(reach.stdoutText()).as("what B reached").doesNotContain(secret).doesNotContain("OPENED");
				assertThat(reach.stdoutText().lines()).hasSize(3 + 2 * paths.size());
			}
			finally {
				holder.stdin().close();
				assertThat(holder.waitFor(PATIENCE)).isTrue();
			}
			assertThat(holder.exitCode()).hasValue(0);
		}
		finally {
			Files.deleteIfExists(hostObject);
			Files.deleteIfExists(hostSemaphore);
		}
	}

	@ForEachLinuxMechanism
	void theExecutionsDirectoryIsGoneAfterIt(MechanismChoice mechanism) throws Exception {
		String name = "/cave-" + UUID.randomUUID();
		Path directory;
		try (ProcessIsolatedExecutor executor = isolated(mechanism)) {
			SandboxedProcess holder = executor.start(run("glibc", "hold", name, "kept").build());
			String held = new BufferedReader(new InputStreamReader(holder.stdout(), StandardCharsets.UTF_8)).readLine();
			assertThat(held).startsWith("held ");
			if (!preloaded(mechanism)) {
				assertThat(held).isEqualTo("held -");
				holder.stdin().close();
				assertThat(holder.waitFor(PATIENCE)).isTrue();
				return;
			}
			directory = Path.of(held.substring("held ".length()));
			assertThat(directory.resolve(name.substring(1))).exists();
			assertThat(directory.resolve("sem." + name.substring(1) + "-sem")).exists();
			holder.stdin().close();
			assertThat(holder.waitFor(PATIENCE)).isTrue();
		}
		assertThat(directory).doesNotExist();
	}

	private static boolean preloaded(MechanismChoice mechanism) {
		return mechanism == MechanismChoice.NAMESPACES || mechanism == MechanismChoice.SECCOMP;
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return LinuxMechanisms.isolated(mechanism, (settings) -> settings.timeout(PATIENCE));
	}

	/**
	 * A request that runs shared-memory.c built with the given libc, put in the private
	 * working directory as an input file.
	 */
	private static ExecutionRequest.Builder run(String libc, String... arguments)
			throws IOException, InterruptedException {
		String program = "shared-memory-" + libc;
		List<String> argv = new ArrayList<>(
				List.of("sh", "-c", "cp " + program + " run && chmod 755 run && exec ./run \"$@\"", "sh"));
		argv.addAll(List.of(arguments));
		return ExecutionRequest.builder(argv).inputFile(program, Files.readAllBytes(compiled(libc))).timeout(PATIENCE);
	}

	/**
	 * shared-memory.c built once per libc: gcc (glibc), musl-gcc without -static, or gcc
	 * -static ({@code static}).
	 */
	static synchronized Path compiled(String libc) throws IOException, InterruptedException {
		Path program = programs.resolve("shared-memory-" + libc);
		if (Files.exists(program)) {
			return program;
		}
		String name = program.getFileName().toString();
		return switch (libc) {
			case "musl" -> CompiledPrograms.compile("musl-gcc", "shared-memory", name, programs, "-Wall", "-Werror");
			case "static" -> CompiledPrograms.compile("gcc", "shared-memory", name, programs, "-static", "-Wall");
			default -> CompiledPrograms.compile("gcc", "shared-memory", name, programs, "-Wall", "-Werror");
		};
	}

}
