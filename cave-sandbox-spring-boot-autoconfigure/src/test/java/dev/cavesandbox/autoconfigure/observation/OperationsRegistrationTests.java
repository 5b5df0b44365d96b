package dev.cavesandbox.autoconfigure.observation;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import dev.cavesandbox.autoconfigure.health.SandboxHealthIndicator;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real {@link org.springframework.boot.SpringApplication} with auto-configuration: the
 * registrations in {@code META-INF} (auto-configuration imports, the environment
 * post-processor) take effect together with Boot's health, observation and metrics
 * auto-configuration.
 */
@EnabledOnOs(OS.LINUX)
class OperationsRegistrationTests {

	@Test
	void isolatedApplicationIsUpAndObserved() {
		try (ConfigurableApplicationContext context = run()) {
			assertThat(context.getBean(HealthEndpoint.class).health().getStatus()).isEqualTo(Status.UP);
			assertThat(context.getBean(IsolatedExecutor.class)).isInstanceOf(ObservedIsolatedExecutor.class);
			context.getBean(IsolatedExecutor.class).execute("true");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("cave.sandbox.execution").tag("isolated", "true").timer().count()).isOne();
			assertThat(meters.get("cave.sandbox.unisolated").gauge().value()).isZero();
		}
	}

	@Test
	void unisolatedFallbackIsTheAggregateHealthStatus() {
		try (ConfigurableApplicationContext context = run("--cave.sandbox.mode=fallback",
				"--" + HostSandboxes.ONLY_UNSHARE, "--" + HostSandboxes.MISSING_UNSHARE_PROPERTY)) {
			assertThat(context.getBean(HealthEndpoint.class).health().getStatus())
				.isEqualTo(SandboxHealthIndicator.UNISOLATED);
			assertThat(context.getBean(MeterRegistry.class).get("cave.sandbox.unisolated").gauge().value()).isOne();
		}
	}

	private static ConfigurableApplicationContext run(String... args) {
		return new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off")
			.run(args);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Application {

	}

}
