package dev.cavesandbox.internal.launcher;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The platform table of {@link LauncherBuild}; reading a build from the jar is shown by
 * {@link LauncherInstallationTests}.
 */
class LauncherBuildTests {

	@Test
	void architecturesAreNamedAsTheBuildNamesThem() {
		assertThat(LauncherBuild.platform("amd64")).isEqualTo("linux-x86_64");
		assertThat(LauncherBuild.platform("aarch64")).isEqualTo("linux-aarch64");
		assertThat(LauncherBuild.platform("riscv64")).isEqualTo("linux-riscv64");
	}

}
