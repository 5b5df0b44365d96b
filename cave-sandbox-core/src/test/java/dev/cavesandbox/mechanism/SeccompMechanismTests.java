package dev.cavesandbox.mechanism;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cavesandbox.ResourceLimits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class SeccompMechanismTests {

	private static final Launcher LAUNCHER = new Launcher(Path.of("/opt/cave/cave-sandbox-launcher"), false);

	@Test
	void commandLineRunsTheLauncherAsItsOwnWrapperInContainMode() {
		List<String> command = new SeccompMechanism(LAUNCHER).commandLine(List.of("echo", "hi"), Path.of("/srv/work"),
				false);
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/proc/self/fd/4", "contain", "--no-mount-namespace", "--", "echo", "hi");
	}

	@Test
	void checkAndUserNamespacesArePassedToTheLauncher() {
		SeccompMechanism mechanism = new SeccompMechanism(new Launcher(LAUNCHER.path(), true));
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false, true)).containsSubsequence(
				"/proc/self/fd/4", "contain", "--allow-userns", "--check", "--no-mount-namespace", "--", "true");
	}

	@Test
	void commandUserGoesToContainNotToOuterAndNamesTheWorkingDirectorysGroup() {
		SeccompMechanism mechanism = new SeccompMechanism(new Launcher(LAUNCHER.path(), false, 65534));
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false)).containsExactly(
				"/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--", "/proc/self/fd/4",
				"contain", "--no-mount-namespace", "--command-user", "65534", "--", "true");
		assertThat(mechanism.commandGroup()).isEqualTo(65534);
		assertThat(new SeccompMechanism(LAUNCHER).commandGroup()).isEqualTo(Launcher.CALLER);
	}

	@Test
	void hasNoNetworkNamespaceSoNoPrivateLoopback() {
		SeccompMechanism mechanism = new SeccompMechanism(LAUNCHER);
		assertThat(mechanism.namespaces()).isEmpty();
		assertThat(mechanism.supportsPrivateLoopback()).isFalse();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> mechanism.commandLine(List.of("true"), Path.of("/srv/work"), true))
			.withMessageContaining("no private loopback");
	}

	@Test
	void needsOnlyTheLauncher() {
		SeccompMechanism mechanism = new SeccompMechanism(LAUNCHER);
		assertThat(mechanism.name()).isEqualTo("seccomp");
		assertThat(mechanism.binaries()).containsExactly(LAUNCHER.path());
		assertThat(mechanism.hides(Path.of("/run/docker.sock"))).isFalse();
		assertThatNullPointerException().isThrownBy(() -> new SeccompMechanism(null));
	}

	@Test
	void limitsGoToTheContainingLauncherAndThereIsNoTmpfsToSize() {
		List<String> command = new SeccompMechanism(LAUNCHER).commandLine(List.of("true"), Path.of("/srv/work"), false,
				false, ResourceLimits.defaults());
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/proc/self/fd/4", "contain", "--no-mount-namespace", "--limit-memory", "4294967296",
				"--limit-processes", "512", "--", "true");
	}

}
