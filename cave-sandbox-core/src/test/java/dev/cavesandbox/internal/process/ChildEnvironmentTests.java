package dev.cavesandbox.internal.process;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutorTests;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * The child's environment: the baseline, the named parent variables, the set ones, and
 * the wrappers' own environment, which holds none of them. The whole path through a real
 * sandbox is tested in {@link ProcessIsolatedExecutorTests}.
 */
class ChildEnvironmentTests {

	private static final Path DIRECTORY = Path.of("/work/private");

	private static final Map<String, String> PARENT = Map.of("TZ", "Europe/Paris", "JAVA_HOME", "/opt/jdk", "SECRET",
			"sk-do-not-leak", "LANG", "de_DE.UTF-8");

	@Test
	void baselineOnlyWhenNothingIsNamed() {
		Map<String, String> environment = ChildEnvironment.of(SandboxSettings.defaults(), ExecutionRequest.of("true"),
				DIRECTORY, PARENT);
		assertThat(environment).containsExactly(entry("PATH", SandboxSettings.BASELINE_PATH),
				entry("HOME", "/work/private"), entry("TMPDIR", "/work/private"), entry("LANG", "C.UTF-8"));
	}

	@Test
	void namedParentVariablesArePassedAndSetOnesWinWithTheRequestLast() {
		SandboxSettings settings = SandboxSettings.builder()
			.passEnvironment(Set.of("TZ", "UNSET_IN_PARENT"))
			.environment(Map.of("LANG", "en_US.UTF-8", "TZ", "UTC"))
			.build();
		ExecutionRequest request = ExecutionRequest.builder("true")
			.passEnvironment("JAVA_HOME")
			.environment("TZ", "Asia/Tokyo")
			.build();
		Map<String, String> environment = ChildEnvironment.of(settings, request, DIRECTORY, PARENT);
		assertThat(environment).containsEntry("JAVA_HOME", "/opt/jdk")
			.containsEntry("TZ", "Asia/Tokyo")
			.containsEntry("LANG", "en_US.UTF-8")
			.doesNotContainKeys("SECRET", "UNSET_IN_PARENT");
	}

	@Test
	void wrappersGetTheBaselinePathAndTheTokenAlone() {
		assertThat(ChildEnvironment.ofWrappers("TOKEN", "t-1"))
			.containsExactly(entry("PATH", SandboxSettings.BASELINE_PATH), entry("TOKEN", "t-1"));
	}

}
