package dev.cavesandbox.compat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthComponent;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

/**
 * {@code cave-sandbox-spring-ai} in a Spring Boot 3.5 application with Spring AI 1.1: the
 * checks of {@link SpringAiApplicationChecks}, and the {@code caveSandboxMcp} health
 * component through Boot 3's health endpoint (its indicator comes from
 * {@code cave-sandbox-spring-boot3-autoconfigure}), which reports the MCP server running
 * in the sandbox.
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class SpringBoot35SpringAiTests extends SpringAiApplicationChecks {

	@Autowired
	private HealthEndpoint healthEndpoint;

	@Override
	String springAiLine() {
		return "1.1.";
	}

	@Override
	String mcpSdkLine() {
		return "0.17.";
	}

	@Test
	void mcpHealthComponentReportsTheServerRunningIsolated() {
		HealthComponent mcp = this.healthEndpoint.healthForPath("caveSandboxMcp");
		assertThat(mcp).isInstanceOf(Health.class);
		assertThat(mcp.getStatus()).isEqualTo(Status.UP);
		assertThat(((Health) mcp).getDetails().get("test")).asInstanceOf(MAP)
			.containsEntry("state", "running")
			.hasEntrySatisfying("isolation",
					(isolation) -> assertThat(isolation).asString().endsWith("(network isolated)"));
	}

}
