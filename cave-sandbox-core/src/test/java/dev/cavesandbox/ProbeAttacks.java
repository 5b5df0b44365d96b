package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.internal.probe.ProbeCommandUids;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * What the red teams of the probe's directory of its own share
 * ({@link ProbeDirectoryBreakInTests}, {@link ProbeDirectoryBreakIn2Tests}): a root JVM,
 * the settings of the seccomp mechanism in a work directory of a chosen mode, attacker
 * programs compiled from the test resources, and an attacker run as another user while
 * the probes run, or as the uid that each probe took for its child.
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
		Path out = Files.createTempFile(base, "attacker", ".out");
		Process attacker = start(uid, gid, environment, out, ready, command);
		try {
			probes.run();
		}
		finally {
			attacker.destroy();
			attacker.waitFor();
		}
		return Files.readString(out);
	}

	/**
	 * Run an attacker as the probe's command uid, of group {@link #NOBODY}, against each
	 * of the probes: once a probe has taken its child's uid from the command users of
	 * this JVM ({@link ProbeCommandUids}), and before it makes its directory, an attacker
	 * of that uid starts (as a program outside the pool could once the pool has handed
	 * the uid out), and the probe goes on half a second later, or once the attacker
	 * printed the word where one is given (at most a minute later). Each attacker is
	 * ended when the next probe takes its uid, and the last after the probes.
	 * @return the uid of each probe, in order, and what the attackers printed
	 */
	static Attack asTheProbesUid(Path base, Map<String, String> environment, @Nullable String ready, Probes probes,
			String... command) throws Exception {
		List<Long> uids = new ArrayList<>();
		List<Path> outs = new ArrayList<>();
		List<Process> attackers = new ArrayList<>();
		try {
			ProbeCommandUids.observing((uid) -> {
				stop(attackers);
				uids.add(uid);
				Path out = Files.createTempFile(base, "attacker-" + uid + "-", ".out");
				outs.add(out);
				attackers.add(start(String.valueOf(uid), NOBODY, environment, out, ready, command));
			}, probes::run);
		}
		finally {
			stop(attackers);
		}
		StringBuilder output = new StringBuilder();
		for (Path out : outs) {
			output.append(Files.readString(out));
		}
		return new Attack(uids, output.toString());
	}

	/**
	 * Start an attacker as a user and give it half a second (its watch in place), and,
	 * where a word is given, wait until it printed it (at most a minute).
	 */
	private static Process start(String uid, String gid, Map<String, String> environment, Path out,
			@Nullable String ready, String... command) throws Exception {
		List<String> argv = new ArrayList<>(List.of("/usr/bin/timeout", "150", "/usr/bin/setpriv", "--reuid=" + uid,
				"--regid=" + gid, "--clear-groups", "--"));
		argv.addAll(List.of(command));
		ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
		builder.environment().putAll(environment);
		Process attacker = builder.start();
		Thread.sleep(500);
		for (int i = 0; i < 600 && ready != null && !Files.readString(out).contains(ready); i++) {
			Thread.sleep(100);
		}
		return attacker;
	}

	private static void stop(List<Process> attackers) throws InterruptedException {
		for (Process attacker : attackers) {
			attacker.destroy();
			attacker.waitFor();
		}
	}

	/**
	 * What {@link #asTheProbesUid} saw: the uid of each probe, in order, and what the
	 * attackers printed.
	 */
	record Attack(List<Long> uids, String output) {

		/** The fact of an available verdict that names the command user of a probe. */
		String commandUserFact(int probe) {
			return "uid " + this.uids.get(probe) + ": the command user";
		}

	}

	/** Probes to run while an attacker acts. */
	@FunctionalInterface
	interface Probes {

		void run() throws Exception;

	}

}
