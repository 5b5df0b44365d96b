package dev.cavesandbox.autoconfigure;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WARN of unknown {@code cave.sandbox.*} keys at startup, before the probe runs. No
 * sandbox runs: the contexts switch isolation off (mechanism none, fallback mode), which
 * the probe answers at once.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class))
		.withPropertyValues("cave.sandbox.mechanism=none", "cave.sandbox.mode=fallback");

	@Test
	void typoIsWarnedWithTheNearestProperty(CapturedOutput output) {
		this.runner.withPropertyValues("cave.sandbox.timout=5s", "cave.sandbox.linux.comand-user=1000")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("WARN")
			.contains("unknown property cave.sandbox.timout, did you mean cave.sandbox.timeout?")
			.contains("unknown property cave.sandbox.linux.comand-user, did you mean cave.sandbox.linux.command-user?");
		assertThat(output.getAll().split("unknown property cave.sandbox.timout", -1)).as("once per context").hasSize(2);
	}

	@Test
	void keyNearNoPropertyIsWarnedWithoutASuggestion(CapturedOutput output) {
		this.runner.withPropertyValues("cave.sandbox.zzzzzzzzzz=1")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("unknown property cave.sandbox.zzzzzzzzzz: no cave.sandbox property binds it");
	}

	@Test
	void keysThatBindInAnyFormAreNotWarned(CapturedOutput output) {
		this.runner
			.withPropertyValues("cave.sandbox.timeout=5s", "cave.sandbox.maxConcurrent=4",
					"cave.sandbox.kill_grace_period=1s", "cave.sandbox.env.set.GREETING=hello",
					"cave.sandbox.env.pass[0]=HOME", "cave.sandbox.filesystem.readable-paths[0]=/srv",
					"cave.sandbox.limits.open-files=100", "cave.other=1", "spring.main.banner-mode=off")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("unknown property");
	}

	/**
	 * Environment variables are not checked: a variable named like a property need not be
	 * one (Kubernetes' service variables, or this module's CAVE_SANDBOX_TEST_* of
	 * surefire).
	 */
	@Test
	void environmentVariablesAreNotChecked(CapturedOutput output) {
		Map<String, Object> variables = Map.of("CAVE_SANDBOX_TIMOUT", "5s", "CAVE_SANDBOX_SERVICE_HOST",
				"cave-sandbox.default.svc");
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource("test-variables", variables)))
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(System.getenv()).containsKey("CAVE_SANDBOX_TEST_SECRET");
		assertThat(output).doesNotContain("unknown property");
	}

	@Test
	void withoutMetadataNothingIsReported() throws IOException {
		MockEnvironment environment = new MockEnvironment().withProperty("cave.sandbox.timout", "5s");
		try (URLClassLoader empty = new URLClassLoader(new URL[0], null)) {
			assertThat(UnknownProperties.fromMetadata(empty).unknown(environment)).isEmpty();
		}
		assertThat(UnknownProperties.fromMetadata(getClass().getClassLoader()).unknown(environment))
			.containsExactly("unknown property cave.sandbox.timout, did you mean cave.sandbox.timeout?");
	}

	@Test
	void distanceCountsInsertionsDeletionsAndSubstitutions() {
		assertThat(UnknownProperties.distance("timout", "timeout")).isOne();
		assertThat(UnknownProperties.distance("timeout", "timeout")).isZero();
		assertThat(UnknownProperties.distance("mechansim", "mechanism")).isEqualTo(2);
		assertThat(UnknownProperties.distance("", "mode")).isEqualTo(4);
	}

}
