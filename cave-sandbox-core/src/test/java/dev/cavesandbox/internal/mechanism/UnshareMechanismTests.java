package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class UnshareMechanismTests {

	private static final FilesystemView HIDE_TMP_AND_RUN = TestViews.HIDE_TMP_AND_RUN;

	private static final FilesystemView SYSTEM = TestViews.SYSTEM;

	private static final Launcher LAUNCHER = new Launcher(Path.of("/opt/cave/cave-sandbox-launcher"), false);

	private static UnshareMechanism mechanism(long uid, boolean keepUid, FilesystemView view) {
		return new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"), LAUNCHER, view, uid, uid,
				keepUid);
	}

	@Test
	void commandLineRunsTheLaunchersRootAsPid1InNewNamespacesThenItsExec() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		List<String> command = mechanism.commandLine(List.of("echo", "hi"), Path.of("/srv/work"), false);
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--user", "--map-root-user",
				"--net", "--mount", "--ipc", "--pid", "--fork", "--kill-child", "--mount-proc", "--", "/proc/self/fd/4",
				"root", "--hide", "/tmp", "--hide", "/run", "--workdir", "/srv/work", "--key-list", "/proc/keys",
				"--key-list", "/proc/key-users", "--read-only", "--pid1-user", "65534", "--map", "1000:1000", "--",
				"/proc/self/fd/4", "exec", "--", "echo", "hi");
		assertThat(command).doesNotContain("/bin/sh", "--root-sysctls", "--loopback");
	}

	@Test
	void rootCallerGetsReadOnlySysctlsAndKeepsUidZeroInItsOwnNamespace() {
		List<String> plan = mechanism(0, true, HIDE_TMP_AND_RUN).mountPlan(Path.of("/srv/work"), false, null)
			.commandLine();
		assertThat(plan).contains("--root-sysctls").containsSequence("--pid1-user", "65534", "--map", "0:0");
	}

	@Test
	void withoutKeepUidThereIsNoNestedUserNamespace() {
		List<String> command = mechanism(1000, false, HIDE_TMP_AND_RUN).commandLine(List.of("id"), Path.of("/srv/work"),
				false);
		assertThat(command).doesNotContain("--pid1-user", "--map", "--map-user=1000");
	}

	@Test
	void loopbackIsBroughtUpByTheLauncherWithoutIp() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.supportsPrivateLoopback()).isTrue();
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), true, true)).containsSequence(
				"--read-only", "--loopback", "--pid1-user", "65534", "--map", "1000:1000", "--", "/proc/self/fd/4",
				"exec", "--allow-inet", "--check", "--", "true");
	}

	@Test
	void binariesAndName() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.binaries()).containsExactly(Path.of("/opt/cave/cave-sandbox-launcher"),
				Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"));
		assertThat(mechanism.name()).isEqualTo("unshare");
	}

	@Test
	void hidesWhatLiesInAHiddenDirectoryAndNothingElse() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.hides(Path.of("/run"))).isTrue();
		assertThat(mechanism.hides(Path.of("/tmp/.X11-unix/X0"))).isTrue();
		assertThat(mechanism.hides(Path.of("/var/lib/socket"))).isFalse();
		assertThat(mechanism.hides(Path.of("/runner"))).isFalse();
	}

	@Test
	void nullBinaryOrFilesystemIsRejected() {
		assertThatNullPointerException().isThrownBy(
				() -> new UnshareMechanism(null, Path.of("/usr/bin/unshare"), LAUNCHER, HIDE_TMP_AND_RUN, 0, 0, true))
			.withMessage("setpriv must not be null");
		assertThatNullPointerException().isThrownBy(
				() -> new UnshareMechanism(Path.of("/usr/bin/setpriv"), null, LAUNCHER, HIDE_TMP_AND_RUN, 0, 0, true))
			.withMessage("unshare must not be null");
		assertThatNullPointerException()
			.isThrownBy(() -> new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"), LAUNCHER,
					null, 0, 0, true))
			.withMessage("filesystem must not be null");
	}

	@Test
	void tmpfsSizeIsAnOptionOfRootAndTheOtherLimitsGoToExec() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		List<String> command = mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false, false,
				ResourceLimits.builder().tmpfsSize(16777216).fileSize(1048576).build());
		assertThat(command).containsSequence("--hide", "/run", "--tmpfs-size", "16777216");
		assertThat(command.subList(command.lastIndexOf("/proc/self/fd/4"), command.size()))
			.containsExactly("/proc/self/fd/4", "exec", "--limit-file-size", "1048576", "--", "true");
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false)).doesNotContain("--tmpfs-size");
	}

	/**
	 * A root JVM's command user: outer has joined the user namespace, so unshare creates
	 * none, PID 1 makes none and the launcher's exec switches to the command user.
	 */
	@Test
	void commandUserLeavesTheUserNamespaceToOuterAndTheUidToTheLauncher() {
		UnshareMechanism mechanism = new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"),
				new Launcher(Path.of("/l"), false, 65534), HIDE_TMP_AND_RUN, 0, 0, true);
		List<String> command = mechanism.commandLine(List.of("id"), Path.of("/srv/work"), false);
		assertThat(command)
			.startsWith("/l", "outer", "--workdir", "/srv/work", "--command-user", "65534", "--", "/usr/bin/setpriv",
					"--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--net", "--mount")
			.endsWith("/proc/self/fd/4", "exec", "--command-user", "65534", "--", "id")
			.doesNotContain("--user", "--map-root-user", "--pid1-user", "--map");
	}

	@Test
	void systemViewBuildsANewRootOverAHiddenDirectory() {
		List<String> command = mechanism(0, true, SYSTEM).commandLine(List.of("id"), Path.of("/srv/work"), false);
		assertThat(command).containsSequence("/proc/self/fd/4", "root", "--new-root", "/tmp", "--system", "/usr");
		FilesystemView none = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/dev/shm")), true,
				List.of(Path.of("/usr")), Map.of(), List.of(), List.of(), List.of(), List.of());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> mechanism(1000, true, none).commandLine(List.of("true"), Path.of("/w"), false))
			.withMessageContaining("a system view needs a hidden directory");
	}

	/**
	 * outer opens the listed paths in the order in which the launcher's root binds them
	 * by their descriptors.
	 */
	@Test
	void listedPathsAreOpenedByOuterAndBoundByTheirDescriptors() {
		FilesystemView view = HIDE_TMP_AND_RUN.withPaths(List.of(Path.of("/run/in")), List.of(Path.of("/srv/out")));
		List<String> command = mechanism(1000, true, view).commandLine(List.of("id"), Path.of("/w"), false);
		assertThat(command.subList(0, command.indexOf("--pdeathsig") - 1)).containsExactly(
				"/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/w", "--listed", "/srv/out", "--listed",
				"/run/in", "--");
		assertThat(command).containsSequence("--bind-listed", "10:/srv/out:rw", "--bind-listed", "11:/run/in:ro");
	}

}
