package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class BubblewrapMechanismTests {

	private static final FilesystemView HIDE_TMP_AND_RUN = TestViews.HIDE_TMP_AND_RUN;

	private static final FilesystemView SYSTEM = TestViews.SYSTEM;

	private static final Launcher LAUNCHER = new Launcher(Path.of("/opt/cave/cave-sandbox-launcher"), false);

	@Test
	void commandLineIsolatesDiesWithItsParentDropsEveryCapabilityAndRunsTheLauncherAsPid1() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN)
			.commandLine(List.of("echo", "hi"), Path.of("/srv/work"), false);
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/usr/bin/bwrap", "--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-pid", "--as-pid-1",
				"--unshare-ipc", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
				"--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
				"--dev-bind-try", "/dev/null", "/proc/keys", "--dev-bind-try", "/dev/null", "/proc/key-users",
				"--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/run", "--remount-ro", "/dev",
				"--bind-fd", "3", "/srv/work", "--chdir", "/srv/work", "--", "/proc/self/fd/4", "init", "--", "echo",
				"hi");
	}

	@Test
	void workingDirectoryIsBoundThroughTheLaunchersDescriptorAfterTheTmpfs() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN)
			.commandLine(List.of("true"), Path.of("/tmp/cave-sandbox-1"), false);
		assertThat(String.join(" ", command))
			.contains("--tmpfs /tmp --perms 1777 --tmpfs /run --remount-ro /dev --bind-fd 3 /tmp/cave-sandbox-1 "
					+ "--chdir /tmp/cave-sandbox-1 -- /proc/self/fd/4 init -- true")
			.doesNotContain("--bind /tmp/cave-sandbox-1");
	}

	@Test
	void writableRootBindsTheHostReadWriteAndTheWorkingDirectoryThroughItsDescriptor() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER,
				FilesystemView.of(List.of(Path.of("/run")), false))
			.commandLine(List.of("true"), Path.of("/srv/work"), false);
		assertThat(String.join(" ", command)).contains("--bind / / --dev /dev")
			.doesNotContain("--ro-bind / /")
			.doesNotContain("--bind /srv/work")
			.endsWith("--bind-fd 3 /srv/work --chdir /srv/work -- /proc/self/fd/4 init -- true");
	}

	@Test
	void argvThatLooksLikeOptionsStaysTheCommand() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN)
			.commandLine(List.of("--help", "--unshare-all"), Path.of("/srv/work"), false);
		assertThat(command.subList(command.lastIndexOf("--") + 1, command.size())).containsExactly("--help",
				"--unshare-all");
		assertThat(command.subList(command.indexOf("--") + 1, command.indexOf("--") + 2))
			.containsExactly("/usr/bin/bwrap");
	}

	@Test
	void loopbackIsAlwaysPrivateAndUpAndLetsTheCommandCreateInternetSockets() {
		BubblewrapMechanism mechanism = new BubblewrapMechanism(Path.of("/opt/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN);
		assertThat(mechanism.supportsPrivateLoopback()).isTrue();
		assertThat(String.join(" ", mechanism.commandLine(List.of("true"), Path.of("/w"), true)))
			.endsWith("/proc/self/fd/4 init --allow-inet -- true");
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/w"), false)).doesNotContain("--allow-inet");
		assertThat(mechanism.binaries()).containsExactly(Path.of("/opt/cave/cave-sandbox-launcher"),
				Path.of("/opt/bwrap"));
		assertThat(mechanism.name()).isEqualTo("bwrap");
	}

	@Test
	void checkAndNestedUserNamespacesReachTheLauncher() {
		BubblewrapMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"),
				new Launcher(Path.of("/l"), true), HIDE_TMP_AND_RUN);
		assertThat(String.join(" ", mechanism.commandLine(List.of("true"), Path.of("/w"), false, true)))
			.endsWith("/proc/self/fd/4 init --allow-userns --check -- true");
	}

	@Test
	void hidesWhatLiesInAHiddenDirectoryAndNothingElse() {
		BubblewrapMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN);
		assertThat(mechanism.hides(Path.of("/tmp"))).isTrue();
		assertThat(mechanism.hides(Path.of("/run/docker.sock"))).isTrue();
		assertThat(mechanism.hides(Path.of("/srv/work/socket"))).isFalse();
		assertThat(mechanism.hides(Path.of("/tmpfoo"))).isFalse();
	}

	@Test
	void nullBinaryLauncherOrFilesystemIsRejected() {
		assertThatNullPointerException().isThrownBy(() -> new BubblewrapMechanism(null, LAUNCHER, HIDE_TMP_AND_RUN))
			.withMessage("bwrap must not be null");
		assertThatNullPointerException()
			.isThrownBy(() -> new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), null, HIDE_TMP_AND_RUN))
			.withMessage("launcher must not be null");
		assertThatNullPointerException()
			.isThrownBy(() -> new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, null))
			.withMessage("filesystem must not be null");
	}

	@Test
	void tmpfsSizeComesBeforeEachHiddenTmpfsAndTheOtherLimitsGoToTheLauncher() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN)
			.commandLine(List.of("true"), Path.of("/srv/work"), false, false,
					ResourceLimits.builder().tmpfsSize(16777216).processes(64).build());
		assertThat(String.join(" ", command)).contains(
				"--size 16777216 --perms 1777 --tmpfs /tmp --size 16777216 --perms 1777 --tmpfs /run --remount-ro /dev --bind-fd")
			.endsWith("/proc/self/fd/4 init --limit-processes 64 -- true");
		assertThat(new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, HIDE_TMP_AND_RUN)
			.commandLine(List.of("true"), Path.of("/srv/work"), false, false, ResourceLimits.NONE))
			.doesNotContain("--size");
	}

	/**
	 * A root JVM's command user: outer joins the user namespace it prepares, so bwrap
	 * creates none, and keeps what the launcher needs to switch to the command user; both
	 * launcher steps get the uid.
	 */
	@Test
	void commandUserLetsOuterCreateTheUserNamespaceAndBwrapKeepOnlyWhatTheSwitchNeeds() {
		Launcher launcher = new Launcher(Path.of("/l"), false, 65534);
		List<String> command = idInSrvWork(launcher, HIDE_TMP_AND_RUN);
		assertThat(command)
			.startsWith("/l", "outer", "--workdir", "/srv/work", "--command-user", "65534", "--", "/usr/bin/bwrap",
					"--die-with-parent", "--unshare-net", "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--cap-drop",
					"ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
					"--cap-add", "CAP_DAC_OVERRIDE", "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_KILL", "--ro-bind",
					"/", "/")
			.endsWith("/proc/self/fd/4", "init", "--command-user", "65534", "--", "id")
			.doesNotContain("--unshare-user");
	}

	@Test
	void systemViewStartsFromAnEmptyRootBindsOnlyTheViewAndEndsReadOnly() {
		List<String> command = idInSrvWork(LAUNCHER, SYSTEM);
		assertThat(String.join(" ", command))
			.contains("--cap-drop ALL --tmpfs / --ro-bind /usr /usr --ro-bind /etc /etc "
					+ "--symlink usr/bin /bin --symlink usr/lib /lib --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys "
					+ "--ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger --dev-bind-try /dev/null /proc/keys "
					+ "--dev-bind-try /dev/null /proc/key-users --perms 1777 --tmpfs /tmp "
					+ "--perms 1777 --tmpfs /dev/shm --bind-fd 10 /srv/out --ro-bind-fd 11 /srv/data "
					+ "--remount-ro /dev --bind-fd 3 /srv/work --dev-bind /dev/null /etc/shadow "
					+ "--tmpfs /etc/ssl/private --remount-ro /etc/ssl/private --remount-ro / --chdir /srv/work -- "
					+ "/proc/self/fd/4 init -- id")
			.doesNotContain("--ro-bind / /")
			.doesNotContain("--bind / /");
	}

	@Test
	void hostViewBindsTheListedPathsAfterTheHiddenDirectoriesAndKeepsTheHostRoot() {
		FilesystemView view = FilesystemView.of(List.of(Path.of("/tmp")), true)
			.withPaths(List.of(Path.of("/tmp/in")), List.of(Path.of("/srv/out")));
		List<String> command = idInSrvWork(LAUNCHER, view);
		assertThat(String.join(" ", command)).contains("--ro-bind / / --dev /dev")
			.contains("--perms 1777 --tmpfs /tmp --bind-fd 10 /srv/out --ro-bind-fd 11 /tmp/in --remount-ro /dev "
					+ "--bind-fd 3 /srv/work --chdir /srv/work --")
			.doesNotContain("--tmpfs / ")
			.doesNotContain("--remount-ro / ");
	}

	/**
	 * outer opens the listed paths in the order bwrap binds them (parents first, at the
	 * same depth the writable ones first), and bwrap binds descriptor 10 + i, never the
	 * path, which a writer of its parent could have swapped for a link.
	 */
	@Test
	void listedPathsAreOpenedByOuterAndBoundThroughTheirDescriptorsInTheirOrder() {
		FilesystemView view = FilesystemView.of(List.of(Path.of("/tmp")), true)
			.withPaths(List.of(Path.of("/srv/a/in"), Path.of("/srv")), List.of(Path.of("/srv/a/out")));
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"),
				new Launcher(Path.of("/l"), false, 65534), view)
			.commandLine(List.of("id"), Path.of("/w"), false);
		assertThat(command.subList(0, command.indexOf("/usr/bin/bwrap"))).containsExactly("/l", "outer", "--workdir",
				"/w", "--listed", "/srv", "--listed", "/srv/a/out", "--listed", "/srv/a/in", "--command-user", "65534",
				"--");
		assertThat(String.join(" ", command))
			.contains(
					"--tmpfs /tmp --ro-bind-fd 10 /srv --bind-fd 11 /srv/a/out --ro-bind-fd 12 /srv/a/in --remount-ro")
			.doesNotContain("--bind /srv")
			.doesNotContain("--ro-bind /srv");
	}

	@Test
	void systemViewWithACommandUserKeepsTheSameMounts() {
		Launcher launcher = new Launcher(Path.of("/l"), false, 65534);
		List<String> command = idInSrvWork(launcher, SYSTEM);
		List<String> withoutUser = idInSrvWork(LAUNCHER, SYSTEM);
		assertThat(command.subList(command.indexOf("--tmpfs"), command.indexOf("/proc/self/fd/4")))
			.isEqualTo(withoutUser.subList(withoutUser.indexOf("--tmpfs"), withoutUser.indexOf("/proc/self/fd/4")));
	}

	private static List<String> idInSrvWork(Launcher launcher, FilesystemView view) {
		return new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), launcher, view).commandLine(List.of("id"),
				Path.of("/srv/work"), false);
	}

}
