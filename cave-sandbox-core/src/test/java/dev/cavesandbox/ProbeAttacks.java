package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * What the red teams of the probe's directory of its own share
 * ({@link ProbeDirectoryBreakInTests}, {@link ProbeDirectoryBreakIn2Tests}): a root JVM,
 * the settings of the seccomp mechanism in a work directory of a chosen mode, attacker
 * programs compiled from the test resources, and an attacker run as another user while
 * the probes run.
 */
final class ProbeAttacks {

	/** The host's {@code nobody}, uid and gid. */
	static final String NOBODY = "65534";

	private ProbeAttacks() {
	}

	static SandboxSettings seccomp(Path work) {
		return SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).workDirectory(work).build();
	}

	static void assumeRoot() {
		assumeThat(System.getProperty("user.name")).as("the JVM runs as root").isEqualTo("root");
	}

	/** A work directory of the given mode in a directory that others may pass. */
	static Path workDirectory(Path base, int mode) throws IOException {
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path work = Files.createDirectory(base.resolve("work"));
		Files.setAttribute(work, "unix:mode", mode);
		return work;
	}

	/** An attacker program of the test resources, compiled where others may run it. */
	static Path compile(Path base, String name) throws Exception {
		Path tools = Files.createDirectories(base.resolve("tools"));
		Path program = CompiledPrograms.compile(name, tools);
		Files.setPosixFilePermissions(tools, PosixFilePermissions.fromString("rwxr-xr-x"));
		return program;
	}

	/**
	 * Run an attacker as another user while the probes run; return what it printed. The
	 * probes start half a second after the attacker (its watch in place), and, where a
	 * word is given, once the attacker printed it (at most a minute later).
	 */
	static String whileRunning(Path base, String uid, String gid, Map<String, String> environment,
			@Nullable String ready, Probes probes, String... command) throws Exception {
		List<String> argv = new ArrayList<>(List.of("/usr/bin/timeout", "150", "/usr/bin/setpriv", "--reuid=" + uid,
				"--regid=" + gid, "--clear-groups", "--"));
		argv.addAll(List.of(command));
		Path out = Files.createTempFile(base, "attacker", ".out");
		ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
		builder.environment().putAll(environment);
		Process attacker = builder.start();
		try {
			Thread.sleep(500);
			for (int i = 0; i < 600 && ready != null && !Files.readString(out).contains(ready); i++) {
				Thread.sleep(100);
			}
			probes.run();
		}
		finally {
			attacker.destroy();
			attacker.waitFor();
		}
		return Files.readString(out);
	}

	/** Probes to run while an attacker acts. */
	@FunctionalInterface
	interface Probes {

		void run() throws Exception;

	}

}
