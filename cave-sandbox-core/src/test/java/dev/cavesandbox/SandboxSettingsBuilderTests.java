package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class SandboxSettingsBuilderTests {

	@Test
	void defaultsAreThoseOfTheProperties() {
		SandboxSettings settings = SandboxSettings.defaults();
		assertThat(settings.mode()).isEqualTo(SandboxMode.STRICT);
		assertThat(settings.timeout()).isEqualTo(Duration.ofSeconds(30));
		assertThat(settings.maxOutputBytes()).isEqualTo(1024 * 1024);
		assertThat(settings.killGracePeriod()).isEqualTo(Duration.ofSeconds(1));
		assertThat(settings.probeTimeout()).isEqualTo(Duration.ofSeconds(10));
		assertThat(settings.maxConcurrent()).isEqualTo(16);
		assertThat(settings.queueTimeout()).isEqualTo(Duration.ofSeconds(30));
		assertThat(settings.workDirectory()).isEqualTo(Path.of(System.getProperty("java.io.tmpdir")));
		assertThat(settings.env().pass()).isEmpty();
		assertThat(settings.env().set()).isEmpty();
		assertThat(settings.linux().unsharePath()).isEqualTo(Path.of("/usr/bin/unshare"));
		assertThat(settings.linux().setprivPath()).isEqualTo(Path.of("/usr/bin/setpriv"));
		assertThat(settings.mechanism()).isEqualTo(MechanismChoice.AUTO);
		assertThat(settings.loopback()).isFalse();
		assertThat(settings.readOnlyRoot()).isTrue();
		assertThat(settings.hiddenDirectories()).containsExactly(Path.of("/tmp"), Path.of("/var/tmp"), Path.of("/run"),
				Path.of("/var/run"), Path.of("/dev/shm"));
		assertThat(settings.linux().bwrapPath()).isEqualTo(Path.of("/usr/bin/bwrap"));
		assertThat(settings.linux().launcherPath()).isNull();
		assertThat(settings.linux().userNamespaces()).isFalse();
		assertThat(settings.macos().sandboxExecPath()).isEqualTo(Path.of("/usr/bin/sandbox-exec"));
		assertThat(settings.maxOutputFileBytes()).isEqualTo(16 * 1024 * 1024);
		assertThat(settings.warm()).isEqualTo(WarmPoolSettings.DEFAULT);
		assertThat(SandboxSettings.builder().build()).isEqualTo(settings);
	}

	@Test
	void builderSetsEveryValue() {
		SandboxSettings settings = SandboxSettings.builder()
			.mode(SandboxMode.FALLBACK)
			.timeout(Duration.ofSeconds(5))
			.maxOutputBytes(7)
			.killGracePeriod(Duration.ofMillis(250))
			.probeTimeout(Duration.ofSeconds(3))
			.maxConcurrent(2)
			.queueTimeout(Duration.ofMillis(1500))
			.workDirectory(Path.of("/srv/work"))
			.passEnvironment(List.of("LANG"))
			.environment(Map.of("A", "1"))
			.unsharePath(Path.of("/opt/unshare"))
			.setprivPath(Path.of("/opt/setpriv"))
			.mechanism(MechanismChoice.UNSHARE)
			.loopback(true)
			.readOnlyRoot(false)
			.hiddenDirectories(List.of(Path.of("/run")))
			.bwrapPath(Path.of("/opt/bwrap"))
			.sandboxExecPath(Path.of("/opt/sandbox-exec"))
			.launcherPath(Path.of("/opt/cave-sandbox-launcher"))
			.userNamespaces(true)
			.warm(WarmPoolSettings.OFF)
			.build();
		assertThat(settings).isEqualTo(new SandboxSettings(SandboxMode.FALLBACK, Duration.ofSeconds(5), 7,
				Duration.ofMillis(250), Duration.ofSeconds(3), 2, Duration.ofMillis(1500), Path.of("/srv/work"),
				new SandboxSettings.Env(Set.of("LANG"), Map.of("A", "1")),
				new SandboxSettings.Linux(Path.of("/opt/unshare"), Path.of("/opt/setpriv"), Path.of("/opt/bwrap"),
						Path.of("/opt/cave-sandbox-launcher"), true),
				MechanismChoice.UNSHARE, true, false, List.of(Path.of("/run")),
				new SandboxSettings.Macos(Path.of("/opt/sandbox-exec")), ResourceLimits.defaults()));
	}

	@Test
	void builderSetsTheCapOfOutputFiles() {
		assertThat(SandboxSettings.builder().maxOutputFileBytes(4096).build().maxOutputFileBytes()).isEqualTo(4096);
	}

	@Test
	void variablesAccumulateButHiddenDirectoriesAreReplaced() {
		SandboxSettings settings = SandboxSettings.builder()
			.passEnvironment(List.of("LANG"))
			.passEnvironment(List.of("TZ"))
			.environment(Map.of("A", "1"))
			.environment(Map.of("B", "2"))
			.hiddenDirectories(List.of(Path.of("/run")))
			.hiddenDirectories(List.of(Path.of("/srv/sockets")))
			.build();
		assertThat(settings.env().pass()).containsExactlyInAnyOrder("LANG", "TZ");
		assertThat(settings.env().set()).containsExactlyInAnyOrderEntriesOf(Map.of("A", "1", "B", "2"));
		assertThat(settings.hiddenDirectories()).containsExactly(Path.of("/srv/sockets"));
	}

	@Test
	void settingsAreACopyThatNeitherTheCallerNorTheBuilderCanChange() {
		List<String> names = new ArrayList<>(List.of("LANG"));
		Map<String, String> variables = new HashMap<>(Map.of("A", "1"));
		List<Path> hidden = new ArrayList<>(List.of(Path.of("/run")));
		SandboxSettings.Builder builder = SandboxSettings.builder()
			.passEnvironment(names)
			.environment(variables)
			.hiddenDirectories(hidden);
		SandboxSettings settings = builder.build();
		names.add("TZ");
		variables.put("B", "2");
		hidden.add(Path.of("/tmp"));
		builder.passEnvironment(List.of("HOME")).environment(Map.of("C", "3"));
		assertThat(settings.env().pass()).containsExactly("LANG");
		assertThat(settings.env().set()).containsExactlyEntriesOf(Map.of("A", "1"));
		assertThat(settings.hiddenDirectories()).containsExactly(Path.of("/run"));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> settings.env().pass().add("TZ"));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> settings.env().set().put("B", "2"));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> settings.hiddenDirectories().add(Path.of("/tmp")));
	}

	/**
	 * The builder sets the view and replaces the listed paths, which neither the caller
	 * nor the builder can change afterwards.
	 */
	@Test
	void builderSetsTheFilesystemView() {
		List<Path> readable = new ArrayList<>(List.of(Path.of("/srv/data")));
		SandboxSettings.Builder builder = SandboxSettings.builder()
			.filesystemView(SandboxSettings.Filesystem.View.HOST)
			.readablePaths(List.of(Path.of("/opt/first")))
			.readablePaths(readable)
			.writablePaths(List.of(Path.of("/srv/out"), Path.of("/srv/log")));
		SandboxSettings settings = builder.build();
		readable.add(Path.of("/etc"));
		builder.readablePaths(List.of(Path.of("/srv/other")));
		assertThat(settings.filesystem()).isEqualTo(new SandboxSettings.Filesystem(SandboxSettings.Filesystem.View.HOST,
				List.of(Path.of("/srv/data")), List.of(Path.of("/srv/out"), Path.of("/srv/log"))));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> settings.filesystem().writablePaths().add(Path.of("/tmp")));
		assertThatExceptionOfType(NullPointerException.class)
			.isThrownBy(() -> SandboxSettings.builder().filesystemView(null).build())
			.withMessage("view must not be null");
	}

}
