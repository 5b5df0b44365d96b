package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NamespacesMechanismTests {

	private static final Launcher LAUNCHER = new Launcher(Path.of("/opt/cave/cave-sandbox-launcher"), false);

	private static final FilesystemView HOST = FilesystemView.of(List.of(Path.of("/tmp")), true);

	private static NamespacesMechanism mechanism(long uid, boolean keepUid) {
		return mechanism(uid, keepUid, HOST);
	}

	private static NamespacesMechanism mechanism(long uid, boolean keepUid, FilesystemView view) {
		return new NamespacesMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"), LAUNCHER, view, uid,
				uid, keepUid);
	}

	/** The command's part of the command line: the launcher's exec and what follows. */
	private static List<String> exec(List<String> command) {
		return command.subList(command.lastIndexOf("/proc/self/fd/4"), command.size());
	}

	@Test
	void systemViewIsBuiltByTheLauncherWithReadsMasksAndWrites() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/tmp")), true,
				List.of(Path.of("/usr"), Path.of("/etc")), Map.of(Path.of("/bin"), Path.of("usr/bin")),
				List.of(Path.of("/etc/shadow")), List.of(Path.of("/etc/ssl/private")), List.of(Path.of("/srv/data")),
				List.of(Path.of("/srv/out")));
		List<String> command = mechanism(1000, true, view).commandLine(List.of("true"), Path.of("/srv/work"), false);
		assertThat(exec(command)).containsExactly("/proc/self/fd/4", "exec", "--no-mount-namespace", "--read", "/usr",
				"--read", "/etc", "--read", "/srv/data", "--mask", "/etc/shadow", "--mask", "/etc/ssl/private",
				"--write", "/srv/out", "--", "true");
		assertThat(command).doesNotContain("/bin", "usr/bin", "/tmp");
	}

	@Test
	void hostViewPassesOnlyItsWritablePaths() {
		FilesystemView view = HOST.withPaths(List.of(Path.of("/srv/data")), List.of(Path.of("/srv/out")));
		List<String> command = mechanism(1000, true, view).commandLine(List.of("true"), Path.of("/srv/work"), false);
		assertThat(exec(command)).containsExactly("/proc/self/fd/4", "exec", "--no-mount-namespace", "--write",
				"/srv/out", "--", "true");
	}

	@Test
	void commandLineCreatesNamespacesWithoutAMountNamespaceAndRunsTheLaunchersRootWithoutMounts() {
		NamespacesMechanism mechanism = mechanism(1000, true);
		List<String> command = mechanism.commandLine(List.of("echo", "hi"), Path.of("/srv/work"), false);
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--user", "--map-root-user",
				"--net", "--ipc", "--pid", "--fork", "--kill-child", "--", "/proc/self/fd/4", "root", "--pid1-user",
				"65534", "--map", "1000:1000", "--", "/proc/self/fd/4", "exec", "--no-mount-namespace", "--", "echo",
				"hi");
		assertThat(command).doesNotContain("--mount", "--mount-proc", "/bin/sh", "--hide");
	}

	@Test
	void withoutKeepUidThereIsNoNestedUserNamespace() {
		assertThat(mechanism(1000, false).commandLine(List.of("id"), Path.of("/srv/work"), false))
			.doesNotContain("--pid1-user", "--map")
			.containsSequence("--kill-child", "--", "/proc/self/fd/4", "root", "--", "/proc/self/fd/4", "exec");
	}

	@Test
	void loopbackIsBroughtUpByTheLauncherAndLetsTheCommandCreateInternetSockets() {
		NamespacesMechanism mechanism = mechanism(1000, true);
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), true))
			.containsSequence("root", "--loopback", "--pid1-user")
			.containsSubsequence("/proc/self/fd/4", "exec", "--allow-inet", "--no-mount-namespace", "--", "true");
		assertThat(mechanism.supportsPrivateLoopback()).isTrue();
	}

	@Test
	void givesNetworkPidAndIpcNamespacesButNoMountNamespaceAndHidesNothing() {
		NamespacesMechanism mechanism = mechanism(1000, true);
		assertThat(mechanism.namespaces()).containsExactlyInAnyOrder(LinuxNamespace.NETWORK, LinuxNamespace.PID,
				LinuxNamespace.IPC);
		assertThat(mechanism.hides(Path.of("/tmp/socket"))).isFalse();
		assertThat(mechanism.name()).isEqualTo("namespaces");
		assertThat(mechanism.binaries()).containsExactly(LAUNCHER.path(), Path.of("/usr/bin/setpriv"),
				Path.of("/usr/bin/unshare"));
	}

	@Test
	void limitsGoToTheLauncherAndThereIsNoTmpfsToSize() {
		NamespacesMechanism mechanism = mechanism(1000, true);
		List<String> command = mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false, false,
				ResourceLimits.builder().tmpfsSize(16777216).openFiles(32).build());
		assertThat(exec(command)).containsExactly("/proc/self/fd/4", "exec", "--no-mount-namespace",
				"--limit-open-files", "32", "--", "true");
		assertThat(String.join(" ", command)).doesNotContain("16777216");
	}

	/**
	 * A root JVM's command user: no user namespace from unshare, no nested one, and the
	 * launcher's exec switches to the command user.
	 */
	@Test
	void commandUserLeavesTheUserNamespaceToOuterAndTheUidToTheLauncher() {
		NamespacesMechanism mechanism = new NamespacesMechanism(Path.of("/usr/bin/setpriv"),
				Path.of("/usr/bin/unshare"), new Launcher(Path.of("/l"), false, 65534), HOST, 0, 0, true);
		List<String> command = mechanism.commandLine(List.of("id"), Path.of("/srv/work"), false);
		assertThat(command).startsWith("/l", "outer", "--workdir", "/srv/work", "--command-user", "65534", "--")
			.endsWith("exec", "--no-mount-namespace", "--command-user", "65534", "--", "id")
			.doesNotContain("--user", "--map-root-user", "--pid1-user", "--map");
	}

}
