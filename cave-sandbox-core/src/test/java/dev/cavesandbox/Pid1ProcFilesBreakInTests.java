package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Red team, issue 26 point 2: what a JVM of nobody's command can do to the sandbox's own
 * PID 1 through its /proc files that need no ptrace access, only the file's owner.
 * <p>
 * A process that is not dumpable has its /proc files owned by root of its memory's user
 * namespace where that namespace maps a root (proc(5), task_dump_owner), else by the
 * host's root. On {@code unshare}, PID 1 ({@code pid1} mode) ran in the namespace of
 * {@code unshare --user --map-root-user}, whose root is the JVM's user: its
 * {@code /proc/1/autogroup} belonged to the command's uid, and writing a nice value there
 * needs no capability to raise it (sched(7), "The autogroup feature"). The autogroup is
 * that of PID 1's session: the JVM's until the launcher gave the sandbox a session of its
 * own (launcher 12), then the session of the sandbox's teardown, which a nice of 19 let
 * 200 spinners in sessions of their own starve ({@link TeardownBreakInTests}). PID 1 now
 * runs in a user namespace of its own that maps no root, so its files belong to the
 * host's root. (bwrap maps no root for a JVM of nobody; the mechanisms without a mount
 * namespace refuse the write by Landlock.)
 */
@EnabledOnOs(OS.LINUX)
class Pid1ProcFilesBreakInTests {

	/** Tries PID 1 and every ancestor it can see, and reports what it changed. */
	private static final String RENICE = "for p in 1 $(awk '{print $4}' /proc/self/stat); do "
			+ "if (echo 19 > /proc/$p/autogroup) 2>/dev/null; then echo \"reniced $p: $(cat /proc/$p/autogroup)\"; "
			+ "fi; done; echo done";

	/**
	 * A JVM of nobody: after a command that writes 19 to {@code /proc/1/autogroup} (and
	 * to its ancestors'), the JVM's own autogroup still has the nice value it had, and
	 * the write to the sandbox's PID 1 was refused on every mechanism.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aNobodyJvmsCommandCannotReniceTheJvmsSessionThroughTheSandboxsPid1(MechanismChoice mechanism,
			@TempDir Path directory) throws Exception {
		assertTheJvmsSessionKeepsItsNiceValue(mechanism, directory);
	}

	private static void assertTheJvmsSessionKeepsItsNiceValue(MechanismChoice mechanism, Path directory)
			throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(directory, ContainerConfinement.Profile.UNCONFINED,
				ContainerConfinement.User.NOBODY, mechanism)) {
			Path autogroup = Path.of("/proc", Long.toString(javaOf(jvm)), "autogroup");
			String before = autogroupOf(autogroup);
			try {
				ContainerJvm.Result result = jvm.isolated("/bin/sh", "-c", RENICE);
				String after = Files.readString(autogroup).trim();
				System.out.println(Pid1ProcFilesBreakInTests.class.getSimpleName() + " " + mechanism
						+ ", nobody's JVM: command printed " + result.stdout().lines().toList()
						+ "; the JVM's autogroup " + before + " before, " + after + " after");
				assertThat(result.stdout()).as(result.stderr()).contains("done");
				assertThat(after).as("the JVM's autogroup after the command (%s)", result.stdout()).isEqualTo(before);
				assertThat(result.stdout()).as("the sandbox's PID 1, whose session tears the sandbox down")
					.doesNotContain("reniced 1:");
			}
			finally {
				// Root may lower it again (CAP_SYS_NICE).
				Files.writeString(autogroup, before.replaceAll(".* nice ", "") + "\n");
			}
		}
	}

	/**
	 * The JVM's autogroup as {@code /proc/PID/autogroup} shows it
	 * ({@code /autogroup-N nice
	 * V}); aborts the test where the JVM has none: the file is empty for a process whose
	 * session is the kernel's first (no ancestor since init called setsid, as in a
	 * container whose init runs the build directly, like this project's CI), where there
	 * is no session share to renice (sched(7), "The autogroup feature"; here
	 * {@code /proc/1/autogroup} is empty).
	 */
	static String autogroupOf(Path autogroup) throws IOException {
		String shown = Files.readString(autogroup).trim();
		assumeTrue(shown.contains(" nice "),
				() -> autogroup + " shows no autogroup (\"" + shown + "\"): the JVM's session has none");
		return shown;
	}

	/**
	 * The java process of the child JVM's confinement (its command line's first process
	 * or below).
	 */
	static long javaOf(ContainerJvm jvm) throws IOException {
		return ProcessHandle.of(jvm.pid())
			.stream()
			.flatMap((handle) -> Stream.concat(Stream.of(handle), handle.descendants()))
			.filter((handle) -> handle.info().command().map((command) -> command.endsWith("/java")).orElse(false))
			.mapToLong(ProcessHandle::pid)
			.findFirst()
			.orElseThrow(() -> new IOException("no java process below " + jvm.pid()));
	}

}
