package dev.cavesandbox.mechanism;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The argv shapes of {@link Launcher}; that the launcher itself accepts them and reports
 * exactly {@link Launcher#refusals(boolean, boolean)} is shown by running it
 * ({@code LauncherWithoutMountNamespaceTests}, the probe's tests).
 */
class LauncherTests {

	private final Launcher launcher = new Launcher(Path.of("/opt/cave-sandbox-launcher"), false);

	@Test
	void insideWithoutMountNamespaceAddsItsOptionLastBeforeTheCommand() {
		assertThat(this.launcher.inside(Launcher.CONTAIN, false, true, true, List.of("cmd", "arg")))
			.containsExactly("/proc/self/fd/4", "contain", "--check", "--no-mount-namespace", "--", "cmd", "arg");
		assertThat(new Launcher(Path.of("/l"), true).inside(Launcher.EXEC, true, false, true, List.of("cmd")))
			.containsExactly("/proc/self/fd/4", "exec", "--allow-inet", "--allow-userns", "--no-mount-namespace", "--",
					"cmd");
	}

	@Test
	void insideWithAMountNamespaceIsTheShapeOfLauncherVersionOne() {
		assertThat(this.launcher.inside(Launcher.INIT, true, true, List.of("cmd")))
			.isEqualTo(this.launcher.inside(Launcher.INIT, true, true, false, List.of("cmd")))
			.containsExactly("/proc/self/fd/4", "init", "--allow-inet", "--check", "--", "cmd");
	}

	@Test
	void unixSocketsComeFirstAmongTheRefusalsOnlyWithoutMountNamespace() {
		assertThat(this.launcher.refusals(false, true)).first().isEqualTo("socket(AF_UNIX)");
		assertThat(this.launcher.refusals(false, true).subList(1, this.launcher.refusals(false, true).size()))
			.isEqualTo(this.launcher.refusals(false));
		assertThat(this.launcher.refusals(true)).isEqualTo(this.launcher.refusals(true, false))
			.doesNotContain("socket(AF_UNIX)", "socket(AF_INET)");
	}

}
