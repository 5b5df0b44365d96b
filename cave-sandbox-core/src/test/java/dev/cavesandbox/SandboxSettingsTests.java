package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SandboxSettingsTests {

	/**
	 * The command user range is written {@code FIRST-LAST}, holds uids from 1 to 2^31 - 1
	 * and at least as many as executions may run at once.
	 */
	@Test
	void commandUserRangeIsParsedAndValidated() {
		assertThat(SandboxSettings.CommandUserRange.parse("70000-70015"))
			.isEqualTo(new SandboxSettings.CommandUserRange(70000, 70015))
			.satisfies((range) -> assertThat(range.size()).isEqualTo(16))
			.satisfies((range) -> assertThat(range.contains(70000) && range.contains(70015)).isTrue())
			.satisfies((range) -> assertThat(range.contains(69999) || range.contains(70016)).isFalse());
		assertThat(SandboxSettings.CommandUserRange.parse(" 5 - 5 ").size()).isEqualTo(1);
		for (String bad : List.of("", "65536", "-65536", "65536-", "a-b", "65536--66559", "+1-2", "1-99999999999")) {
			assertThatIllegalArgumentException().as(bad)
				.isThrownBy(() -> SandboxSettings.CommandUserRange.parse(bad))
				.withMessage("a command user range must be written FIRST-LAST with two decimal uids, for example "
						+ "65536-66559, not '" + bad + "'");
		}
		for (String bad : List.of("0-15", "20-19", "2147483640-2147483648")) {
			assertThatIllegalArgumentException().as(bad)
				.isThrownBy(() -> SandboxSettings.CommandUserRange.parse(bad))
				.withMessageStartingWith("a command user range must go from a uid of at least 1 to one of at most "
						+ "2147483647 that is not lower, not " + bad);
		}
		assertThat(SandboxSettings.CommandUserRange.parse("2147483632-2147483647").size()).isEqualTo(16);
		assertThat(SandboxSettings.builder()
			.commandUserRange(SandboxSettings.CommandUserRange.parse("70000-70003"))
			.maxConcurrent(4)
			.build()
			.linux()
			.commandUserRange()).hasToString("70000-70003");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SandboxSettings.builder()
				.commandUserRange(SandboxSettings.CommandUserRange.parse("70000-70002"))
				.maxConcurrent(4)
				.build())
			.withMessage("commandUserRange 70000-70002 holds 3 uids, fewer than maxConcurrent (4): each execution of "
					+ "a root JVM on the seccomp mechanism runs as a uid of its own; widen the range or lower "
					+ "maxConcurrent");
		assertThatExceptionOfType(NullPointerException.class)
			.isThrownBy(() -> new SandboxSettings.Linux(Path.of("/usr/bin/unshare"), Path.of("/usr/bin/setpriv"),
					Path.of("/usr/bin/bwrap"), null, false, 65534, null))
			.withMessage("commandUserRange must not be null");
	}

	@Test
	void groupsValidateTheirSettingsAsTheBuilderDoes() {
		assertThatIllegalArgumentException().isThrownBy(() -> new SandboxSettings.Env(Set.of("A=B"), Map.of()))
			.withMessage("variable name 'A=B' to pass is not valid");
		assertThatIllegalArgumentException().isThrownBy(() -> new SandboxSettings.Env(Set.of(), Map.of("A", "x\0y")))
			.withMessage("environment variable 'A' must have a non-empty name without '=' and no NUL byte in its "
					+ "name or value");
		assertThatExceptionOfType(NullPointerException.class)
			.isThrownBy(() -> new SandboxSettings.Linux(Path.of("/usr/bin/unshare"), Path.of("/usr/bin/setpriv"), null,
					null, false))
			.withMessage("bwrapPath must not be null");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new SandboxSettings.Linux(Path.of("/usr/bin/unshare"), Path.of("/usr/bin/setpriv"),
					Path.of("/usr/bin/bwrap"), null, false, -1))
			.withMessage("commandUser must be a uid (0 keeps a root JVM's commands root), not -1");
		assertThat(SandboxSettings.defaults().linux().commandUser()).isEqualTo(65534);
		assertThat(SandboxSettings.defaults().linux().commandUserRange())
			.isEqualTo(new SandboxSettings.CommandUserRange(65536, 66559))
			.hasToString("65536-66559");
		assertThat(SandboxSettings.builder().commandUser(0).build().linux().commandUser()).isZero();
		assertThatExceptionOfType(NullPointerException.class).isThrownBy(() -> new SandboxSettings.Macos(null))
			.withMessage("sandboxExecPath must not be null");
		SandboxSettings defaults = SandboxSettings.defaults();
		assertThatExceptionOfType(NullPointerException.class)
			.isThrownBy(() -> new SandboxSettings(defaults.mode(), defaults.timeout(), defaults.maxOutputBytes(),
					defaults.killGracePeriod(), defaults.probeTimeout(), defaults.maxConcurrent(),
					defaults.queueTimeout(), defaults.workDirectory(), defaults.env(), null, defaults.mechanism(),
					defaults.loopback(), defaults.readOnlyRoot(), defaults.hiddenDirectories(), defaults.macos(),
					defaults.limits()))
			.withMessage("linux must not be null");
	}

	@ParameterizedTest
	@ValueSource(strings = { "timeout", "killGracePeriod", "probeTimeout", "queueTimeout" })
	void durationsMustBePositive(String name) {
		for (Duration invalid : new Duration[] { Duration.ZERO, Duration.ofMillis(-1) }) {
			assertThatIllegalArgumentException().isThrownBy(() -> withDuration(name, invalid).build())
				.withMessage(name + " must be positive, but was " + invalid);
		}
		assertThatIllegalArgumentException().isThrownBy(() -> withDuration(name, null).build())
			.withMessage(name + " must be positive, but was null");
		assertThat(withDuration(name, Duration.ofNanos(1)).build()).isNotNull();
	}

	private static SandboxSettings.Builder withDuration(String name, Duration value) {
		SandboxSettings.Builder builder = SandboxSettings.builder();
		return switch (name) {
			case "timeout" -> builder.timeout(value);
			case "killGracePeriod" -> builder.killGracePeriod(value);
			case "probeTimeout" -> builder.probeTimeout(value);
			case "queueTimeout" -> builder.queueTimeout(value);
			default -> throw new IllegalArgumentException(name);
		};
	}

	@Test
	void outputCapAndConcurrencyMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> SandboxSettings.builder().maxOutputBytes(0).build())
			.withMessage("maxOutputBytes must be positive, but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> SandboxSettings.builder().maxOutputBytes(-1).build())
			.withMessage("maxOutputBytes must be positive, but was -1");
		assertThatIllegalArgumentException().isThrownBy(() -> SandboxSettings.builder().maxConcurrent(0).build())
			.withMessage("maxConcurrent must be positive, but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> SandboxSettings.builder().maxConcurrent(-1).build())
			.withMessage("maxConcurrent must be positive, but was -1");
		assertThatIllegalArgumentException().isThrownBy(() -> SandboxSettings.builder().maxOutputFileBytes(0).build())
			.withMessage("maxOutputFileBytes must be positive, but was 0");
		SandboxSettings smallest = SandboxSettings.builder().maxOutputBytes(1).maxConcurrent(1).build();
		assertThat(smallest.maxOutputBytes()).isEqualTo(1);
		assertThat(smallest.maxConcurrent()).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "A=B", "=A", "A\0B", "\0A" })
	void environmentVariableNamesMustBeNonEmptyWithoutEqualsOrNul(String name) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SandboxSettings.builder().environment(Map.of(name, "value")).build())
			.withMessage("environment variable '" + name.replace('\0', '?')
					+ "' must have a non-empty name without '=' and no NUL byte in its name or value");
	}

	@Test
	void environmentVariableValuesMustHaveNoNulButMayHaveEqualsAndBeEmpty() {
		for (String value : List.of("x\0y", "\0x")) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> SandboxSettings.builder().environment(Map.of("A", value)).build())
				.withMessage("environment variable 'A' must have a non-empty name without '=' and no NUL byte in its "
						+ "name or value");
		}
		assertThat(SandboxSettings.builder().environment(Map.of("A", "b=c", "E", "")).build().env().set())
			.containsExactlyInAnyOrderEntriesOf(Map.of("A", "b=c", "E", ""));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "A=B", "=A", "A\0B", "\0A" })
	void namesToPassMustBeNonEmptyWithoutEqualsOrNul(String name) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SandboxSettings.builder().passEnvironment(List.of(name)).build())
			.withMessage("variable name '" + name.replace('\0', '?') + "' to pass is not valid");
	}

	@ParameterizedTest
	@ValueSource(strings = { "/", "tmp", "run/user", "" })
	void hiddenDirectoriesMustBeAbsoluteAndNotTheRoot(String directory) {
		assertThatIllegalArgumentException().isThrownBy(
				() -> SandboxSettings.builder().hiddenDirectories(List.of(Path.of("/run"), Path.of(directory))).build())
			.withMessage("a hidden directory must be an absolute path other than /, but was " + directory);
	}

	@Test
	void requiredValuesMustNotBeNull() {
		assertNullRejected("mode", (builder) -> builder.mode(null));
		assertNullRejected("workDirectory", (builder) -> builder.workDirectory(null));
		assertNullRejected("unsharePath", (builder) -> builder.unsharePath(null));
		assertNullRejected("setprivPath", (builder) -> builder.setprivPath(null));
		assertNullRejected("mechanism", (builder) -> builder.mechanism(null));
		assertNullRejected("bwrapPath", (builder) -> builder.bwrapPath(null));
		assertNullRejected("sandboxExecPath", (builder) -> builder.sandboxExecPath(null));
	}

	/**
	 * By default commands get the system view without listed paths, by the builder and by
	 * the constructor without a filesystem.
	 */
	@Test
	void defaultFilesystemIsTheSystemViewWithoutListedPaths() {
		SandboxSettings.Filesystem filesystem = SandboxSettings.defaults().filesystem();
		assertThat(filesystem.view()).isEqualTo(SandboxSettings.Filesystem.View.SYSTEM);
		assertThat(filesystem.readablePaths()).isEmpty();
		assertThat(filesystem.writablePaths()).isEmpty();
		assertThat(filesystem).isEqualTo(SandboxSettings.Filesystem.DEFAULT);
		SandboxSettings defaults = SandboxSettings.defaults();
		assertThat(new SandboxSettings(defaults.mode(), defaults.timeout(), defaults.maxOutputBytes(),
				defaults.killGracePeriod(), defaults.probeTimeout(), defaults.maxConcurrent(), defaults.queueTimeout(),
				defaults.workDirectory(), defaults.env(), defaults.linux(), defaults.mechanism(), defaults.loopback(),
				defaults.readOnlyRoot(), defaults.hiddenDirectories(), defaults.macos(), defaults.limits())
			.filesystem()).isEqualTo(SandboxSettings.Filesystem.DEFAULT);
	}

	/** A listed path must be absolute and not the root. */
	@ParameterizedTest
	@ValueSource(strings = { "data", "srv/data", "/" })
	void listedPathsMustBeAbsoluteAndNotTheRoot(String path) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SandboxSettings.builder().readablePaths(List.of(Path.of(path))).build())
			.withMessage("a readable path must be an absolute path other than /, but was " + path);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SandboxSettings.builder().writablePaths(List.of(Path.of("/srv"), Path.of(path))).build())
			.withMessage("a writable path must be an absolute path other than /, but was " + path);
	}

	private static void assertNullRejected(String name, UnaryOperator<SandboxSettings.Builder> customizer) {
		assertThatExceptionOfType(NullPointerException.class)
			.isThrownBy(() -> customizer.apply(SandboxSettings.builder()).build())
			.withMessage(name + " must not be null");
	}

}
