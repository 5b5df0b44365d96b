package dev.cavesandbox.boot3.autoconfigure;

import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WARN of unknown {@code cave.sandbox.*} keys on Spring Boot 3.5: the
 * auto-configuration of {@code cave-sandbox-spring-boot-autoconfigure}, which both Boot
 * lines load, finds the metadata and binds keys the same way there. No sandbox runs
 * (isolation switched off, fallback mode).
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesBoot3Tests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class))
		.withPropertyValues("cave.sandbox.mechanism=none", "cave.sandbox.mode=fallback");

	@Test
	void typoIsWarnedWithTheNearestPropertyOnBoot3(CapturedOutput output) {
		assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
		this.runner.withPropertyValues("cave.sandbox.timout=5s", "cave.sandbox.maxConcurrent=4")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("unknown property cave.sandbox.timout, did you mean cave.sandbox.timeout?")
			.doesNotContain("unknown property cave.sandbox.maxConcurrent");
	}

}
