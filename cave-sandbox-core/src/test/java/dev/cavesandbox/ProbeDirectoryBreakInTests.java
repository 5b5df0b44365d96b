package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.cavesandbox.ProbeAttacks.Attack;
import dev.cavesandbox.ProbeAttacks.Probes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static dev.cavesandbox.ProbeAttacks.NOBODY;
import static dev.cavesandbox.ProbeAttacks.asTheProbesUid;
import static dev.cavesandbox.ProbeAttacks.assumeRoot;
import static dev.cavesandbox.ProbeAttacks.compile;
import static dev.cavesandbox.ProbeAttacks.seccomp;
import static dev.cavesandbox.ProbeAttacks.whileRunning;
import static dev.cavesandbox.ProbeAttacks.workDirectory;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Red team of the probe's directory of its own (ProbeSession, ProbeDirectory: created new
 * with a random name in the work directory, mode 0700, reached by the JVM only through
 * its open descriptor; always the JVM user's, 0701 during a run on {@code seccomp} with a
 * root JVM): other local users of a shared work directory, of a non-sticky world-writable
 * one, the probe's command uid itself, and the shared {@code /dev/shm}, against the
 * verdict of {@code seccomp}.
 */
@EnabledOnOs(OS.LINUX)
class ProbeDirectoryBreakInTests {

	/**
	 * The probe's child once checked that the host's {@code /dev/shm} is refused by
	 * writing {@code /dev/shm/cave-sandbox-probe-$$}, a name any local user could take
	 * first for every pid, so that a writable {@code /dev/shm} looked refused. Now it
	 * creates a new file (noclobber) under 16 hex digits of its own from
	 * {@code /dev/urandom}, and only a refusal counts as one: uid 65534 taking every
	 * {@code pid} name changes nothing, the probe still fails naming {@code /dev/shm}.
	 */
	@Test
	void anotherUserCannotMakeTheProbeSeeDevShmRefusedByTakingItsNameFirst(@TempDir Path base) throws Exception {
		assumeRoot();
		Path work = workDirectory(base, 01777);
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.SECCOMP)
			.workDirectory(work)
			.writablePaths(List.of(Path.of("/dev/shm")))
			.build();
		IsolationCapability honest = new NetworkIsolationProbe(settings).probe();
		assertThat(honest.available()).as("%s", honest).isFalse();
		assertThat(honest.detail()).contains("/dev/shm");
		String planter = "import os\nmade = 0\nfor n in range(1, 1 + int(open('/proc/sys/kernel/pid_max').read())):\n"
				+ "    try: os.mkdir('/dev/shm/cave-sandbox-probe-%d' % n); made += 1\n" + "    except OSError: pass\n"
				+ "print('taken', made)\n";
		String output;
		IsolationCapability attacked;
		try {
			output = asUser(NOBODY, NOBODY, base, "/usr/bin/python3", "-c", planter);
			attacked = new NetworkIsolationProbe(settings).probe();
		}
		finally {
			removeTaken();
		}
		assertThat(output).as("the other user took the names").containsPattern("taken [1-9]");
		assertThat(attacked.available()).as("%s", attacked).isFalse();
		assertThat(attacked.detail()).contains("/dev/shm");
	}

	/**
	 * The probe's command uid (a uid of {@code cave.sandbox.linux.command-user-range}
	 * that the probe takes from the command users of this JVM; the attacker starts as it
	 * once the probe holds it, before the probe's directory is made), as a process
	 * outside the sandbox (here one on the host; Landlock does not cover chmod(2), so a
	 * command of another JVM's execution that got the same uid could try the same in the
	 * host view), tries to take every permission off the probe's directory while the
	 * probe runs, so that the child's check of its directory's path fails and the probe
	 * runs again without the command user (commands that stay the host's root,
	 * RLIMIT_NPROC not enforced). When the probe's directory was that uid's during the
	 * run, it could (seen: three runs of three). Now the directory stays the JVM user's
	 * (0701 during the run): the chmod is refused, and the probe runs again without the
	 * command user only where the modes of the directories above the working directory,
	 * as the JVM reads them, shut the command user out.
	 */
	@Test
	void theCommandUidCannotMakeTheProbeDropTheCommandUser(@TempDir Path base) throws Exception {
		assumeRoot();
		Path work = workDirectory(base, 01777);
		SandboxSettings settings = seccomp(work);
		IsolationCapability honest = new NetworkIsolationProbe(settings).probe();
		assertThat(honest.verified()).as("%s", honest)
			.anyMatch((fact) -> fact.matches("uid \\d+: the command user .*"));
		Path swapper = compile(base, "probe-command-user-swapper");
		List<IsolationCapability> verdicts = new ArrayList<>();
		Attack attack = asTheProbesUid(base, Map.of(), null, probes(settings, 5, verdicts), swapper.toString(),
				work.toString(), "blink", "-", "100");
		String output = attack.output();
		assertThat(output).as("the command uid tried").contains(": blink ").doesNotContain("blink done");
		assertThat(attack.uids()).as("one attacker per probe").hasSameSizeAs(verdicts);
		assertKeptTheCommandUser(verdicts, attack);
	}

	/**
	 * The same uid tries to move the probe's planted file and its working directory out
	 * into a {@code /tmp}-shaped work directory. As the owner of the probe's directory
	 * during the run it could: the probe left the root files moved out behind and,
	 * running again in a working directory that was gone, named its launcher missing
	 * (BINARY_MISSING; seen: two runs of two). Now it owns nothing of the probe's, and
	 * the probe's directory (0701, the JVM user's) refuses the moves.
	 */
	@Test
	void theCommandUidCannotMakeTheProbeLeaveItsFilesBehind(@TempDir Path base) throws Exception {
		assumeRoot();
		Path work = workDirectory(base, 01777);
		SandboxSettings settings = seccomp(work);
		Path swapper = compile(base, "probe-command-user-swapper");
		List<IsolationCapability> verdicts = new ArrayList<>();
		Attack attack = asTheProbesUid(base, Map.of(), null, probes(settings, 2, verdicts), swapper.toString(),
				work.toString(), "steal", "-", "100");
		String output = attack.output();
		assertThat(output).as("the command uid tried").contains(": steal ").doesNotContain("steal done");
		assertThat(attack.uids()).as("one attacker per probe").hasSameSizeAs(verdicts);
		assertThat(entries(work)).as("%s %s", output, verdicts).containsExactly("cave-sandbox-0");
		assertThat(verdicts).noneMatch((verdict) -> verdict.cause() == UnavailabilityCause.BINARY_MISSING);
	}

	/**
	 * The same uid's other move: it tries to rename the working directory away while the
	 * probe runs and put a link to a root directory under its name. When it owned the
	 * probe's directory it could, and the launcher refused the link. Now the rename is
	 * refused: no command writes the link's target, and the command user stays.
	 */
	@Test
	void theCommandUidsLinkInPlaceOfTheWorkingDirectoryIsRefused(@TempDir Path base) throws Exception {
		assumeRoot();
		Path work = workDirectory(base, 01777);
		Path vault = vault(base);
		SandboxSettings settings = seccomp(work);
		Path swapper = compile(base, "probe-command-user-swapper");
		List<IsolationCapability> verdicts = new ArrayList<>();
		Attack attack = asTheProbesUid(base, Map.of(), null, probes(settings, 3, verdicts), swapper.toString(),
				work.toString(), "link", vault.toString(), "100");
		String output = attack.output();
		assertThat(output).as("the command uid tried").contains(": link ").doesNotContain("link done");
		assertThat(entries(vault)).as(output).containsExactly("secret");
		assertThat(attack.uids()).as("one attacker per probe").hasSameSizeAs(verdicts);
		assertKeptTheCommandUser(verdicts, attack);
	}

	/**
	 * A work directory that every user may write, without the sticky bit (0777, as a
	 * Kubernetes {@code emptyDir}): uid 65534 exchanges the probe's new directory, as
	 * soon as it appears, with a link to a root directory of its choice (renameat2
	 * RENAME_EXCHANGE). When the probe worked on by path through its directory's name it
	 * wrote the link's target, left its directory with its files behind, and failed with
	 * causes that named neither (seen: every directory left behind, the target written
	 * once in four runs). Now the probe opens its directory without following a link at
	 * once, checks it, and reaches it only through that descriptor: the link is refused,
	 * the verdict names the fix ({@code chmod +t}), and nothing of the probe's stays but
	 * an empty directory that the other user renamed before the probe could open it (the
	 * probe cannot know its new name; one it renamed later, in the work directory, the
	 * probe finds by its file key and removes).
	 */
	@Test
	void anotherUserOfANonStickyWorkDirectoryCannotMakeTheProbeWriteThroughALinkOrLeaveItsDirectory(@TempDir Path base)
			throws Exception {
		assumeRoot();
		Path work = workDirectory(base, 0777);
		Path vault = vault(base);
		SandboxSettings settings = seccomp(work);
		Path swapper = compile(base, "probe-directory-swapper");
		List<IsolationCapability> verdicts = new ArrayList<>();
		String output = whileRunning(base, NOBODY, NOBODY, Map.of(), null, probes(settings, 4, verdicts),
				swapper.toString(), work.toString(), "link", vault.toString(), "100");
		assertThat(output).as("the other user acted").contains("swapped");
		assertThat(entries(vault)).as("the link's target, %s", verdicts).containsExactly("secret");
		// holds: the handover (fchown through the directory's descriptor) never reaches
		// it
		assertThat(Files.getAttribute(vault, "unix:uid")).isEqualTo(0);
		assertThat(leftBehind(work)).as("the work directory, %s", verdicts).isEmpty();
		assertThat(verdicts).as(output)
			.noneMatch((verdict) -> verdict.cause() == UnavailabilityCause.BINARY_MISSING)
			.anySatisfy((verdict) -> assertThat(verdict.detail()).contains("chmod +t " + work.toRealPath()));
	}

	/**
	 * The same exchange, with the machine loaded by the other user (two busy processes of
	 * its own). When it landed between the creation of the probe's directory and its
	 * {@code toRealPath()}, the probe took the link's target for its own directory and
	 * deleted the whole tree (seen: a root 0700 directory and its file deleted in the
	 * 26th, the 12th and the 14th run of three tries). Now the probe resolves the work
	 * directory first, never its own directory's path, and deletes only through its
	 * directory's descriptor.
	 */
	@Test
	void anotherUserOfANonStickyWorkDirectoryCannotMakeTheProbeDeleteADirectoryOfItsChoice(@TempDir Path base)
			throws Exception {
		assumeRoot();
		Path work = workDirectory(base, 0777);
		Path vault = vault(base);
		SandboxSettings settings = seccomp(work);
		Path swapper = compile(base, "probe-directory-swapper");
		List<Process> load = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			load.add(new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
					"--", "/usr/bin/timeout", "150", "/bin/sh", "-c", "while :; do :; done")
				.start());
		}
		List<String> verdicts = new ArrayList<>();
		String output;
		try {
			output = whileRunning(base, NOBODY, NOBODY, Map.of(), null, () -> {
				long end = System.nanoTime() + 120_000_000_000L;
				while (System.nanoTime() < end && Files.exists(vault.resolve("secret")) && verdicts.size() < 60) {
					IsolationCapability verdict = new NetworkIsolationProbe(settings).probe();
					verdicts.add(verdict.available() ? "available" : verdict.cause() + ": " + verdict.detail());
				}
			}, swapper.toString(), work.toString(), "link", vault.toString(), "140");
		}
		finally {
			for (Process process : load) {
				process.destroy();
				process.waitFor();
			}
		}
		assertThat(output).as("the other user acted").contains("swapped");
		assertThat(vault.resolve("secret")).as("after %s runs: %s", verdicts.size(), verdicts).exists();
	}

	/** Run the probe of the settings a number of times, keeping its verdicts. */
	private static Probes probes(SandboxSettings settings, int times, List<IsolationCapability> verdicts) {
		return () -> {
			for (int run = 0; run < times; run++) {
				verdicts.add(new NetworkIsolationProbe(settings).probe());
			}
		};
	}

	/**
	 * Each verdict that is available names as its command user the uid that its probe
	 * took, which its attacker ran as.
	 */
	private static void assertKeptTheCommandUser(List<IsolationCapability> verdicts, Attack attack) {
		for (int probe = 0; probe < verdicts.size(); probe++) {
			IsolationCapability verdict = verdicts.get(probe);
			String fact = attack.commandUserFact(probe);
			assertThat(!verdict.available() || verdict.verified().stream().anyMatch((f) -> f.startsWith(fact)))
				.as("probe %d (%s): %s; %s", probe, fact, verdict, attack.output())
				.isTrue();
		}
	}

	/** A root directory, mode 0700, with one file. */
	private static Path vault(Path base) throws IOException {
		Path vault = Files.createDirectory(base.resolve("vault"),
				PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
		Files.writeString(vault.resolve("secret"), "root's");
		return vault;
	}

	/**
	 * The entries of the work directory that are the probe's (root's, named like its
	 * directory; not the other user's links), other than an empty directory that the
	 * other user renamed ({@code .swapped}).
	 */
	private static List<String> leftBehind(Path work) throws IOException {
		List<String> left = new ArrayList<>();
		for (String name : entries(work)) {
			Path entry = work.resolve(name);
			if (name.startsWith("cave-sandbox-probe-")
					&& (Integer) Files.getAttribute(entry, "unix:uid", LinkOption.NOFOLLOW_LINKS) == 0
					&& !(name.endsWith(".swapped") && Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)
							&& entries(entry).isEmpty())) {
				left.add(name);
			}
		}
		return left;
	}

	private static List<String> entries(Path directory) throws IOException {
		if (!Files.exists(directory)) {
			return List.of("(" + directory + " deleted)");
		}
		try (Stream<Path> entries = Files.list(directory)) {
			return entries.map((path) -> path.getFileName().toString())
				.filter((name) -> !name.startsWith(".swapper-"))
				.sorted()
				.toList();
		}
	}

	/** Run a program as another user to its end; return what it printed. */
	private static String asUser(String uid, String gid, Path base, String... command) throws Exception {
		List<String> argv = new ArrayList<>(List.of("/usr/bin/timeout", "120", "/usr/bin/setpriv", "--reuid=" + uid,
				"--regid=" + gid, "--clear-groups", "--"));
		argv.addAll(List.of(command));
		Path out = Files.createTempFile(base, "user", ".out");
		Process process = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile()).start();
		process.waitFor();
		return Files.readString(out);
	}

	/** Remove the directories the other user took in /dev/shm (empty, uid 65534's). */
	private static void removeTaken() throws IOException {
		try (Stream<Path> entries = Files.list(Path.of("/dev/shm"))) {
			for (Path entry : entries.filter((path) -> path.getFileName().toString().startsWith("cave-sandbox-probe-"))
				.toList()) {
				if (Files.isDirectory(entry) && (Integer) Files.getAttribute(entry, "unix:uid") == 65534) {
					Files.deleteIfExists(entry);
				}
			}
		}
	}

}
