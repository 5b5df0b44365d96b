package dev.cavesandbox.autoconfigure.health;

import java.io.IOException;
import java.nio.file.Path;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SmallTmpfs;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.actuate.endpoint.CompositeHealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.HttpCodeStatusMapper;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code sandbox} health indicator in an application context, in each mode and with
 * each verdict of the real probe. The tests tagged {@value HostSandboxes#SANDBOX} need a
 * working sandbox on this host (the probe verifies isolation in the context); the others
 * take the real verdict of a probe whose unshare binary does not exist
 * ({@link HostSandboxes#withoutIsolation()}) instead of probing, and need none.
 * {@code ./mvnw verify} runs both.
 */
@EnabledOnOs(OS.LINUX)
class CaveSandboxHealthAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(CaveSandboxAutoConfiguration.class, CaveSandboxHealthAutoConfiguration.class));

	private final ApplicationContextRunner endpointRunner = this.runner
		.withConfiguration(AutoConfigurations.of(HealthContributorAutoConfiguration.class,
				HealthContributorRegistryAutoConfiguration.class, HealthEndpointAutoConfiguration.class))
		.withInitializer((context) -> new SandboxHealthStatusEnvironmentPostProcessor()
			.postProcessEnvironment(context.getEnvironment(), new SpringApplication()));

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void verifiedIsolationIsUp() {
		this.runner.run((context) -> {
			Health health = context.getBean("sandboxHealthIndicator", SandboxHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("mode", "strict")
				.containsEntry("mechanism", context.getBean(IsolationCapability.class).mechanismName());
		});
	}

	/**
	 * The seccomp mechanism gives no namespace: health is up, and its details name what
	 * the mechanism does not give, as the probe verified it.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void aMechanismWithoutNamespacesIsUpAndNamesWhatItDoesNotGive() {
		this.runner.withPropertyValues("cave.sandbox.mechanism=seccomp").run((context) -> {
			Health health = context.getBean(SandboxHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("mechanism", "seccomp");
			assertThat(health.getDetails().get("probe").toString()).contains("not given: network namespace")
				.contains("not given: PID namespace")
				.contains("not given: hidden directories")
				.contains("writes outside the working directory: refused (Landlock)");
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void verifiedIsolationInFallbackModeIsUp() {
		this.runner.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> assertThat(context.getBean(SandboxHealthIndicator.class).health().getStatus())
				.isEqualTo(Status.UP));
	}

	@Test
	void fallbackWithoutIsolationIsUnisolated() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> {
				Health health = context.getBean(SandboxHealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(SandboxHealthIndicator.UNISOLATED);
				assertThat(health.getDetails()).containsEntry("mode", "fallback").containsEntry("isolated", false);
				assertThat(health.getDetails().get("probe").toString()).contains("cause=BINARY_MISSING")
					.contains("cave.sandbox.linux.bwrap-path / unshare-path / setpriv-path");
			});
	}

	@Test
	void strictWithoutIsolationAndWithoutFailFastIsDown() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.fail-fast=false")
			.run((context) -> {
				Health health = context.getBean(SandboxHealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).containsEntry("error", NetworkIsolationUnavailableException.CODE);
			});
	}

	@Test
	void unusableWorkDirectoryIsDownWithItsCauseAndFix(@TempDir Path directory) throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(directory, "size=1m")) {
			tmpfs.remount(true);
			this.runner
				.withPropertyValues("cave.sandbox.work-directory=" + tmpfs.path(), "cave.sandbox.fail-fast=false")
				.run((context) -> {
					Health health = context.getBean(SandboxHealthIndicator.class).health();
					assertThat(health.getStatus()).isEqualTo(Status.DOWN);
					assertThat(health.getDetails()).containsEntry("error", NetworkIsolationUnavailableException.CODE);
					assertThat(health.getDetails().get("probe").toString()).contains("cause=WORK_DIRECTORY_UNUSABLE")
						.contains(tmpfs.path() + " (workDirectory) is on a read-only file system")
						.contains("fix=free space or inodes")
						.contains("cave.sandbox.linux.launcher-path")
						.doesNotContainIgnoringCase("fallback");
				});
		}
	}

	@Test
	void strictWithoutIsolationAndWithFailFastNeverStarts() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(NetworkIsolationUnavailableException.class));
	}

	@Test
	void canBeSwitchedOff() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback", "management.health.sandbox.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean(SandboxHealthIndicator.class));
	}

	@Test
	void followsTheDefaultOfAllIndicators() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback", "management.health.defaults.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(SandboxHealthIndicator.class));
	}

	@Test
	void backsOffWithoutSpringBootHealth() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean("sandboxHealthIndicator"));
	}

	@Test
	void backsOffFromAnIndicatorOfTheSameName() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withUserConfiguration(OwnIndicatorConfiguration.class)
			.run((context) -> assertThat(context).doesNotHaveBean(SandboxHealthIndicator.class)
				.hasBean("sandboxHealthIndicator"));
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void appearsAsTheSandboxComponentOfTheHealthEndpoint() {
		this.endpointRunner.run((context) -> {
			CompositeHealthDescriptor health = (CompositeHealthDescriptor) context.getBean(HealthEndpoint.class)
				.health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getComponents()).containsKey("sandbox");
			assertThat(health.getComponents().get("sandbox").getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void unisolatedIsTheAggregateStatusAndStillServesHttp200() {
		this.endpointRunner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> {
				CompositeHealthDescriptor health = (CompositeHealthDescriptor) context.getBean(HealthEndpoint.class)
					.health();
				assertThat(health.getStatus()).isEqualTo(SandboxHealthIndicator.UNISOLATED);
				assertThat(health.getComponents().get("ping").getStatus()).isEqualTo(Status.UP);
				assertThat(context.getBean(HttpCodeStatusMapper.class).getStatusCode(health.getStatus()))
					.isEqualTo(200);
			});
	}

	@Test
	void unisolatedCanBeMappedToAnotherHttpStatus() {
		this.endpointRunner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback",
					"management.endpoint.health.status.http-mapping.unisolated=503")
			.run((context) -> assertThat(
					context.getBean(HttpCodeStatusMapper.class).getStatusCode(SandboxHealthIndicator.UNISOLATED))
				.isEqualTo(503));
	}

	@Test
	void downInStrictModeIsTheAggregateStatusAndHttp503() {
		this.endpointRunner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.fail-fast=false")
			.run((context) -> {
				CompositeHealthDescriptor health = (CompositeHealthDescriptor) context.getBean(HealthEndpoint.class)
					.health();
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(context.getBean(HttpCodeStatusMapper.class).getStatusCode(health.getStatus()))
					.isEqualTo(503);
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnIndicatorConfiguration {

		@Bean
		HealthIndicator sandboxHealthIndicator() {
			return () -> Health.up().withDetail("own", true).build();
		}

	}

}
