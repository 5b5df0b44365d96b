package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.probe.LinuxProbe;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The command user of a JVM running as the host's root ({@code --command-user}, see
 * {@link dev.cavesandbox.internal.launcher.Launcher}): on the mechanisms with a user
 * namespace the command runs as {@code cave.sandbox.linux.command-user} (default 65534)
 * with {@code CAP_DAC_OVERRIDE} and {@code CAP_FOWNER} over root:root files only (on
 * namespaces, which has no mount namespace, {@code CAP_DAC_OVERRIDE} alone), so that the
 * process limit holds; it still writes the root JVM's working directories, and gains
 * nothing over files of other owners. On the seccomp mechanism, which has no user
 * namespace, each execution runs as a uid of the host of its own from
 * {@code cave.sandbox.linux.command-user-range} (default 65536-66559), all with the
 * command user's gid ({@code --command-group}), without any capability, and the working
 * directory's group is that gid for the execution. With command user 0 it stays root. Run
 * only where the JVM is the host's root (as in CI).
 */
@EnabledOnOs(OS.LINUX)
class LauncherCommandUserTests {

	private static final String NOBODY = "65534";

	@BeforeEach
	void hostRoot() {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
	}

	/**
	 * The command's identity: uid and gid 65534 without supplementary groups, only
	 * {@code CAP_DAC_OVERRIDE} and {@code CAP_FOWNER} (bounding set included; on
	 * namespaces {@code CAP_DAC_OVERRIDE} alone), in a user namespace that maps only 0
	 * and 65534; on the seccomp mechanism, in the host's user namespace, a uid of the
	 * command user range with gid 65534, without any capability. The probe's facts say
	 * which.
	 */
	@ForEachLinuxMechanism
	void aRootJvmsCommandRunsAsTheCommandUserWithOnlyDacOverrideAndFowner(MechanismChoice choice,
			@TempDir Path directory) throws Exception {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			ExecutionResult result = run(executor, directory,
					"id -u; id -g; id -G; grep -E '^Cap(Eff|Bnd|Amb):' /proc/self/status; cat /proc/self/uid_map");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			List<String> lines = result.stdoutText().lines().map((line) -> line.replaceAll("\\s+", " ")).toList();
			List<String> facts = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
				.verified();
			if (choice == MechanismChoice.SECCOMP) {
				String uid = lines.get(0);
				assertThat(SandboxSettings.CommandUserRange.DEFAULT.contains(Long.parseLong(uid))).as(uid).isTrue();
				assertThat(lines).containsExactly(uid, NOBODY, NOBODY, "CapEff: 0000000000000000",
						"CapBnd: 0000000000000000", "CapAmb: 0000000000000000", " 0 0 4294967295");
				assertThat(facts).contains("capabilities: none", "gid 65534: the command user's, which every "
						+ "execution shares (files and IPC objects made group-accessible, the working directory during "
						+ "the execution)")
					.anyMatch((fact) -> fact
						.matches("uid (\\d+): the command user of a root JVM, so that the process limit holds \\(a "
								+ "uid of the command user range that no execution held meanwhile: each execution runs as a uid "
								+ "of the host of its own.*"))
					.noneMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN + "the process limit"));
				return;
			}
			// Without a mount namespace no read-only root guards the host's root:root
			// files,
			// and Landlock does not cover chmod(2): CAP_DAC_OVERRIDE alone there.
			String caps = (choice == MechanismChoice.NAMESPACES) ? "0000000000000002" : "000000000000000a";
			assertThat(lines).containsExactly(NOBODY, NOBODY, NOBODY, "CapEff: " + caps, "CapBnd: " + caps,
					"CapAmb: " + caps, " 0 0 1", " 65534 65534 1");
			assertThat(facts).contains("uid 65534: the command user of a root JVM, so that the process limit holds")
				.noneMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN + "the process limit"));
		}
	}

	/**
	 * Files: the command writes its private working directory (root's, 0700) and a
	 * working directory of the application's (root's, 0755), reads and rewrites a
	 * root:root 0600 file there, and its own files are 65534's on the host. It cannot
	 * read a file of another owner that only that owner may read, nor anything of
	 * {@code /etc/shadow} (masked, empty, in the system view; root:shadow in the host
	 * view, whose shadow group is not mapped), and cannot become root again.
	 */
	@ForEachLinuxMechanism
	void theCommandUserWritesRootsWorkingDirectoriesButGainsNothingElse(MechanismChoice choice, @TempDir Path directory)
			throws Exception {
		assumeThat(choice).isNotEqualTo(MechanismChoice.SECCOMP);
		Path secret = Files.writeString(directory.resolve("roots"), "root's\n");
		Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
		Path others = Files.writeString(directory.resolve("others"), "another user's\n");
		Files.setAttribute(others, "unix:uid", 1234);
		Files.setAttribute(others, "unix:gid", 1234);
		Files.setPosixFilePermissions(others, PosixFilePermissions.fromString("rw-------"));
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			ExecutionResult result = run(executor, directory,
					"cat roots && echo again >> roots && echo made > made && echo wrote; "
							+ "cat others 2>/dev/null || echo others=refused; "
							+ "(test -s /etc/shadow && head -c 1 /etc/shadow >/dev/null 2>&1) || echo shadow=refused; "
							+ "/usr/bin/python3 -c 'import os; os.setuid(0)' 2>/dev/null || echo setuid=refused");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText())
				.isEqualTo("root's\nwrote\nothers=refused\nshadow=refused\nsetuid=refused\n");
			assertThat(Files.readString(secret)).isEqualTo("root's\nagain\n");
			assertThat(Files.getAttribute(directory.resolve("made"), "unix:uid", LinkOption.NOFOLLOW_LINKS))
				.isEqualTo(65534);
			ExecutionResult privately = executor.execute("sh", "-c",
					"echo x > own && stat -c '%u %a' own . && mkdir d && echo y > d/f && cat d/f");
			assertThat(privately.exitCode()).as(privately.stderrText()).isZero();
			assertThat(privately.stdoutText()).isEqualTo("65534 644\n0 700\ny\n");
		}
	}

	/**
	 * The seccomp mechanism's command user, a uid of the host without capabilities: the
	 * application's working directory (root's, 0700) is its group's for the execution
	 * only, so that it writes it, and reaches it by its path ({@code TMPDIR}); it reads
	 * the files there that others may read, not root's 0600 one, nor {@code /etc/shadow};
	 * it cannot change the directory's mode (root stays its owner). Afterwards the
	 * directory's group and mode are what they were, and what the command made is the
	 * execution's command user's (a uid of the range) with the command user's group
	 * (65534), writable by that group (the launcher takes the group-write bit out of the
	 * umask, 022 here: 664), so that the next execution's uid can write it too. A private
	 * directory is the same, in a home that others may pass through (0711) but not list.
	 */
	@org.junit.jupiter.api.Test
	void onTheSeccompMechanismTheCommandUserHasTheWorkingDirectorysGroupForTheExecutionOnly(@TempDir Path directory)
			throws Exception {
		Path input = Files.writeString(directory.resolve("input"), "for everyone\n");
		Files.setPosixFilePermissions(input, PosixFilePermissions.fromString("rw-r--r--"));
		Path secret = Files.writeString(directory.resolve("roots"), "root's\n");
		Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(MechanismChoice.SECCOMP,
				(settings) -> settings)) {
			ExecutionResult result = run(executor, directory,
					"id -u; cat input && echo made > made && stat -c '%u %g %a' . made; "
							+ "cat roots 2>/dev/null || echo roots=refused; "
							+ "(test -s /etc/shadow && head -c 1 /etc/shadow >/dev/null 2>&1) || echo shadow=refused; "
							+ "chmod 777 . 2>/dev/null || echo chmod=refused; "
							+ "/usr/bin/python3 -c 'import tempfile; print(tempfile.mkstemp()[1])'");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			String real = directory.toRealPath().toString();
			String uid = result.stdoutText().lines().findFirst().orElseThrow();
			assertThat(SandboxSettings.CommandUserRange.DEFAULT.contains(Long.parseLong(uid))).as(uid).isTrue();
			assertThat(result.stdoutText()).startsWith(uid + "\nfor everyone\n0 65534 770\n" + uid
					+ " 65534 664\nroots=refused\nshadow=refused\nchmod=refused\n" + real + "/tmp");
			assertThat(Files.getAttribute(directory, "unix:gid")).isEqualTo(0);
			assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(directory))).isEqualTo("rwx------");
			assertThat(Files.getAttribute(directory.resolve("made"), "unix:uid", LinkOption.NOFOLLOW_LINKS))
				.isEqualTo(Integer.parseInt(uid));
			ExecutionResult privately = executor.execute("sh", "-c",
					"id -u && echo x > own && stat -c '%u %g %a' own . && /usr/bin/python3 -c "
							+ "'import tempfile; tempfile.mkstemp()' && ls .. 2>/dev/null || echo home=unlisted");
			assertThat(privately.exitCode()).as(privately.stderrText()).isZero();
			String own = privately.stdoutText().lines().findFirst().orElseThrow();
			assertThat(privately.stdoutText()).isEqualTo(own + "\n" + own + " 65534 664\n0 65534 770\nhome=unlisted\n");
			assertThat(SandboxSettings.CommandUserRange.DEFAULT.contains(Long.parseLong(own))).as(own).isTrue();
			Path home = PrivateHome.of(SandboxSettings.builder().build().workDirectory());
			assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home, LinkOption.NOFOLLOW_LINKS)))
				.isEqualTo("rwx-----x");
		}
	}

	/**
	 * A work directory that the seccomp mechanism's command user cannot pass through
	 * (mode 0700): the probe sees it, the commands stay root, and the facts say why the
	 * process limit does not hold, with the fix.
	 */
	@org.junit.jupiter.api.Test
	void aWorkDirectoryTheCommandUserCannotReachKeepsSeccompCommandsRootAndSaysWhy(@TempDir Path workDirectory)
			throws Exception {
		Files.setPosixFilePermissions(workDirectory, PosixFilePermissions.fromString("rwx------"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(MechanismChoice.SECCOMP,
				(settings) -> settings.workDirectory(workDirectory))) {
			ExecutionResult result = executor.execute("id", "-u");
			assertThat(result.stdoutText()).isEqualTo("0\n");
			assertThat(LinuxMechanisms.verified(
					SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).workDirectory(workDirectory).build())
				.verified())
				// the command user: the uid of the range that the probe took from the
				// pool
				.anyMatch((fact) -> fact.matches(Pattern
					.quote(LinuxProbe.NOT_GIVEN + "the process limit: the "
							+ "command runs as the host's root (uid 0), which the kernel exempts from RLIMIT_NPROC "
							+ "(kernel/fork.c); the command user ")
						+ "\\d+"
						+ Pattern.quote(" cannot reach the work directory " + workDirectory + " by its path ("
								+ workDirectory + " does not let it pass: give others search permission, x, on it and "
								+ "its parents, or choose another cave.sandbox.work-directory); a JVM of another user "
								+ "bounds it")));
		}
	}

	/**
	 * {@code cave.sandbox.linux.command-user=0}: a root JVM's commands stay root, and the
	 * probe's facts say that the process limit is not given.
	 */
	@ForEachLinuxMechanism
	void commandUserZeroKeepsARootJvmsCommandsRoot(MechanismChoice choice, @TempDir Path directory) throws IOException {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.commandUser(0))) {
			ExecutionResult result = run(executor, directory, "id -u; grep '^CapEff:' /proc/self/status");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText().replaceAll("\\s+", " ")).isEqualTo("0 CapEff: 0000000000000000 ");
			assertThat(LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).commandUser(0).build())
				.verified()).anyMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN + "the process limit"));
		}
	}

	/**
	 * The launcher itself takes {@code --command-group} only in {@code contain} and only
	 * with {@code --command-user}: the user namespace of {@code init} and {@code exec}
	 * maps the command user's own uid and gid, nothing else. It refuses the others before
	 * it runs anything (exit 125, the command never ran).
	 */
	@org.junit.jupiter.api.Test
	void theLauncherTakesACommandGroupOnlyInContainWithACommandUser() throws Exception {
		Path launcher = ((SeccompMechanism) LinuxMechanisms
			.verified(SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).build())
			.mechanism()).launcher().path();
		for (List<String> refused : List.of(
				List.of("exec", "--command-user", "65536", "--command-group", NOBODY, "--", "/bin/true"),
				List.of("contain", "--command-group", NOBODY, "--", "/bin/true"))) {
			List<String> command = new ArrayList<>(List.of(launcher.toString()));
			command.addAll(refused);
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor()).as(output).isEqualTo(125);
			assertThat(output).as("%s", refused)
				.isEqualTo("cave-sandbox-launcher: --command-group is for contain with --command-user\n");
		}
	}

	/**
	 * On the seccomp mechanism the launcher does not count the command user's other tasks
	 * into the process limit ({@code limits.c}): a uid of the range is checked free
	 * before an execution gets it, so there are none. Were there one after all (here a
	 * process of that uid outside the JVM's tree, as a foreign program's would be), the
	 * command's {@code RLIMIT_NPROC} is still the setting, not the setting plus that
	 * task: the limit is only stricter.
	 */
	@org.junit.jupiter.api.Test
	void theSeccompCommandUsersProcessLimitIsTheSettingWhateverElseRunsAsItsUid(@TempDir Path directory)
			throws Exception {
		long uid = 66740;
		String marker = "59." + (100000 + ThreadLocalRandom.current().nextInt(900000));
		new ProcessBuilder("/usr/bin/setsid", "-f", "/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + uid,
				"--clear-groups", "/bin/sleep", marker)
			.start()
			.waitFor();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> !squatters(marker).isEmpty());
			SeccompMechanism seccomp = ((SeccompMechanism) LinuxMechanisms
				.verified(SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).build())
				.mechanism()).withCommandUser(uid);
			List<String> command = seccomp.commandLine(
					List.of("/bin/sh", "-c", "id -u; grep '^Max processes' /proc/self/limits"), directory.toRealPath(),
					false, false, ResourceLimits.builder().processes(20).build());
			Process process = new ProcessBuilder(command).directory(directory.toFile())
				.redirectErrorStream(true)
				.start();
			process.getOutputStream().close();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor()).as(output).isZero();
			assertThat(output.replaceAll("[ \\t]+", " ")).isEqualTo(uid + "\nMax processes 20 20 processes \n");
		}
		finally {
			squatters(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	private static List<ProcessHandle> squatters(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info()
				.arguments()
				.map((arguments) -> List.of(arguments).contains(marker))
				.orElse(false))
			.toList();
	}

	private static ExecutionResult run(ProcessIsolatedExecutor executor, Path directory, String script) {
		return executor.execute(ExecutionRequest.builder("sh", "-c", script)
			.workingDirectory(directory)
			.timeout(Duration.ofSeconds(30))
			.build());
	}

}
