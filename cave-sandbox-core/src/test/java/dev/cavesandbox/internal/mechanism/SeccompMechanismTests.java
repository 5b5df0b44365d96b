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

class SeccompMechanismTests {

	private static final Launcher LAUNCHER = new Launcher(Path.of("/opt/cave/cave-sandbox-launcher"), false);

	private static final FilesystemView HOST = FilesystemView.of(List.of(Path.of("/tmp")), true);

	@Test
	void systemViewIsBuiltByTheContainingLauncherWithReadsMasksAndWrites() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true,
				List.of(Path.of("/usr"), Path.of("/etc")), Map.of(Path.of("/lib"), Path.of("usr/lib")),
				List.of(Path.of("/etc/shadow")), List.of(Path.of("/etc/ssh")), List.of(Path.of("/home/app/data")),
				List.of(Path.of("/srv/out")));
		assertThat(new SeccompMechanism(new Launcher(LAUNCHER.path(), false, 65534), view).commandLine(List.of("true"),
				Path.of("/srv/work"), false))
			.containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
					"/proc/self/fd/4", "contain", "--no-mount-namespace", "--command-user", "65534", "--read", "/usr",
					"--read", "/etc", "--read", "/home/app/data", "--mask", "/etc/shadow", "--mask", "/etc/ssh",
					"--write", "/srv/out", "--", "true");
	}

	@Test
	void hostViewPassesOnlyItsWritablePaths() {
		FilesystemView view = HOST.withPaths(List.of(Path.of("/srv/data")), List.of(Path.of("/srv/out")));
		assertThat(new SeccompMechanism(LAUNCHER, view).commandLine(List.of("true"), Path.of("/srv/work"), false))
			.containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
					"/proc/self/fd/4", "contain", "--no-mount-namespace", "--write", "/srv/out", "--", "true");
	}

	@Test
	void commandLineRunsTheLauncherAsItsOwnWrapperInContainMode() {
		List<String> command = new SeccompMechanism(LAUNCHER, HOST).commandLine(List.of("echo", "hi"),
				Path.of("/srv/work"), false);
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/proc/self/fd/4", "contain", "--no-mount-namespace", "--", "echo", "hi");
	}

	@Test
	void checkAndUserNamespacesArePassedToTheLauncher() {
		SeccompMechanism mechanism = new SeccompMechanism(new Launcher(LAUNCHER.path(), true), HOST);
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false, true)).containsSubsequence(
				"/proc/self/fd/4", "contain", "--allow-userns", "--check", "--no-mount-namespace", "--", "true");
	}

	@Test
	void commandUserGoesToContainNotToOuterAndNamesTheWorkingDirectorysGroup() {
		SeccompMechanism mechanism = new SeccompMechanism(new Launcher(LAUNCHER.path(), false, 65534), HOST);
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false)).containsExactly(
				"/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--", "/proc/self/fd/4",
				"contain", "--no-mount-namespace", "--command-user", "65534", "--", "true");
		assertThat(mechanism.commandGroup()).isEqualTo(65534);
		assertThat(new SeccompMechanism(LAUNCHER, HOST).commandGroup()).isEqualTo(Launcher.CALLER);
	}

	/**
	 * Each execution of a root JVM runs as a uid of its own with the command user's gid:
	 * a copy of the verified mechanism with that uid, whose contain gets the gid apart
	 * ({@code --command-group}) and whose working directory's group stays the command
	 * user's; the verified one is unchanged, and one without a command user gets none.
	 */
	@Test
	void withCommandUserIsACopyThatRunsTheCommandAsThatUidWithTheCommandUsersGid() {
		SeccompMechanism verified = new SeccompMechanism(
				new Launcher(LAUNCHER.path(), false, 65534).withCommandUser(65536), HOST);
		SeccompMechanism execution = verified.withCommandUser(65599);
		assertThat(execution.commandLine(List.of("true"), Path.of("/srv/work"), false)).containsExactly(
				"/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--", "/proc/self/fd/4",
				"contain", "--no-mount-namespace", "--command-user", "65599", "--command-group", "65534", "--", "true");
		assertThat(execution.commandGroup()).isEqualTo(65534);
		assertThat(verified.commandGroup()).isEqualTo(65534);
		assertThat(verified.launcher().commandUser()).isEqualTo(65536);
		assertThat(execution.withPaths(List.of(Path.of("/srv/data")), List.of()))
			.isInstanceOfSatisfying(SeccompMechanism.class, (listed) -> {
				assertThat(listed.launcher().commandUser()).isEqualTo(65599);
				assertThat(listed.commandGroup()).isEqualTo(65534);
			});
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new SeccompMechanism(LAUNCHER, HOST).withCommandUser(65599))
			.withMessageContaining("only a launcher with a command user");
		assertThatIllegalArgumentException().isThrownBy(() -> verified.withCommandUser(0));
		assertThatIllegalArgumentException().isThrownBy(() -> verified.withCommandUser(Launcher.CALLER));
	}

	@Test
	void hasNoNetworkNamespaceSoNoPrivateLoopback() {
		SeccompMechanism mechanism = new SeccompMechanism(LAUNCHER, HOST);
		assertThat(mechanism.namespaces()).isEmpty();
		assertThat(mechanism.supportsPrivateLoopback()).isFalse();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> mechanism.commandLine(List.of("true"), Path.of("/srv/work"), true))
			.withMessageContaining("no private loopback");
	}

	@Test
	void needsOnlyTheLauncher() {
		SeccompMechanism mechanism = new SeccompMechanism(LAUNCHER, HOST);
		assertThat(mechanism.name()).isEqualTo("seccomp");
		assertThat(mechanism.binaries()).containsExactly(LAUNCHER.path());
		assertThat(mechanism.hides(Path.of("/run/docker.sock"))).isFalse();
		assertThatNullPointerException().isThrownBy(() -> new SeccompMechanism(null, HOST));
		assertThatNullPointerException().isThrownBy(() -> new SeccompMechanism(LAUNCHER, null));
	}

	@Test
	void limitsGoToTheContainingLauncherAndThereIsNoTmpfsToSize() {
		List<String> command = new SeccompMechanism(LAUNCHER, HOST).commandLine(List.of("true"), Path.of("/srv/work"),
				false, false, ResourceLimits.defaults());
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/proc/self/fd/4", "contain", "--no-mount-namespace", "--limit-memory", "4294967296",
				"--limit-processes", "512", "--", "true");
	}

}
