package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class ProbedSettingsTests {

	@Test
	void probedHoldsWhatTheProbeVerifies() {
		SandboxSettings settings = SandboxSettings.builder()
			.mode(SandboxMode.FALLBACK)
			.mechanism(MechanismChoice.UNSHARE)
			.loopback(true)
			.readOnlyRoot(false)
			.hiddenDirectories(List.of(Path.of("/run")))
			.workDirectory(Path.of("/srv/work"))
			.readablePaths(List.of(Path.of("/opt/tools")))
			.build();
		ProbedSettings probed = settings.probed();
		assertThat(probed).isEqualTo(new ProbedSettings(SandboxMode.FALLBACK, MechanismChoice.UNSHARE, settings.linux(),
				settings.macos(), true, false, List.of(Path.of("/run")), settings.filesystem(), Path.of("/srv/work"),
				settings.limits()));
	}

	@Test
	void perExecutionDefaultsAreNotProbed() {
		SandboxSettings settings = SandboxSettings.builder()
			.timeout(Duration.ofSeconds(5))
			.maxOutputBytes(7)
			.maxConcurrent(2)
			.environment(Map.of("A", "1"))
			.allowedHosts(List.of("example.com"))
			.build();
		assertThat(settings.probed()).isEqualTo(SandboxSettings.defaults().probed());
		assertThat(SandboxSettings.defaults().probed().changesTo(settings.probed())).isEmpty();
	}

	@Test
	void changesToNamesEachDifferenceInAStableOrder() {
		ProbedSettings bound = SandboxSettings.defaults().probed();
		ProbedSettings customized = SandboxSettings.builder()
			.workDirectory(Path.of("/srv/work"))
			.readOnlyRoot(false)
			.launcherPath(Path.of("/opt/launcher"))
			.mechanism(MechanismChoice.BWRAP)
			.build()
			.probed();
		assertThat(bound.changesTo(customized)).containsExactly("mechanism auto -> bwrap",
				"linux.launcherPath null -> /opt/launcher", "readOnlyRoot true -> false",
				"workDirectory " + bound.workDirectory() + " -> /srv/work");
	}

	@Test
	void changesToNamesTheLimits() {
		ProbedSettings bound = SandboxSettings.defaults().probed();
		ResourceLimits limits = ResourceLimits.defaults().toBuilder().processes(16).build();
		ProbedSettings customized = SandboxSettings.builder().limits(limits).build().probed();
		assertThat(bound.changesTo(customized))
			.containsExactly("limits " + ResourceLimits.defaults() + " -> " + limits);
	}

	@Test
	void hiddenDirectoriesAreACopy() {
		List<Path> hidden = new ArrayList<>(List.of(Path.of("/run")));
		SandboxSettings defaults = SandboxSettings.defaults();
		ProbedSettings probed = new ProbedSettings(defaults.mode(), defaults.mechanism(), defaults.linux(),
				defaults.macos(), false, true, hidden, defaults.filesystem(), defaults.workDirectory(),
				defaults.limits());
		hidden.add(Path.of("/tmp"));
		assertThat(probed.hiddenDirectories()).containsExactly(Path.of("/run"));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> probed.hiddenDirectories().add(Path.of("/tmp")));
	}

}
