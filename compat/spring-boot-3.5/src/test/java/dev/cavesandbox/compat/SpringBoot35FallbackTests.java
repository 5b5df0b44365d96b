package dev.cavesandbox.compat;

import dev.cavesandbox.boot3.autoconfigure.SandboxBoot3HealthIndicator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter in a Spring Boot 3.5 application in fallback mode on a host made unable to
 * isolate (the only allowed mechanism, unshare, does not exist): besides
 * {@link FallbackApplicationChecks}, the {@code sandbox} component and the aggregate
 * health are {@code UNISOLATED}.
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest(properties = { "cave.sandbox.mode=fallback", "cave.sandbox.mechanism=unshare",
		"cave.sandbox.linux.unshare-path=/nonexistent/compat/unshare", "management.info.sandbox.enabled=true" })
class SpringBoot35FallbackTests extends FallbackApplicationChecks {

	@Autowired
	private HealthEndpoint healthEndpoint;

	@Test
	void unisolatedIsTheAggregateHealthStatus() {
		assertThat(this.healthEndpoint.healthForPath("sandbox").getStatus())
			.isEqualTo(SandboxBoot3HealthIndicator.UNISOLATED);
		assertThat(this.healthEndpoint.health().getStatus()).isEqualTo(SandboxBoot3HealthIndicator.UNISOLATED);
	}

}
