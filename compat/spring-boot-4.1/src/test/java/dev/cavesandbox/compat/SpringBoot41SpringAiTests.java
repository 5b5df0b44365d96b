package dev.cavesandbox.compat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

/**
 * {@code cave-sandbox-spring-ai} in a Spring Boot 4.1 application with Spring AI 2.0: the
 * checks of {@link SpringAiApplicationChecks}, and the {@code caveSandboxMcp} health
 * component, which reports the MCP server running in the sandbox.
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class SpringBoot41SpringAiTests extends SpringAiApplicationChecks {

	@Autowired
	private HealthEndpoint healthEndpoint;

	@Override
	String springAiLine() {
		return "2.0.";
	}

	@Override
	String mcpSdkLine() {
		return "2.0.";
	}

	@Test
	void mcpHealthComponentReportsTheServerRunningIsolated() {
		HealthDescriptor mcp = this.healthEndpoint.healthForPath("caveSandboxMcp");
		assertThat(mcp).isInstanceOf(IndicatedHealthDescriptor.class);
		assertThat(mcp.getStatus()).isEqualTo(Status.UP);
		Map<String, Object> details = ((IndicatedHealthDescriptor) mcp).getDetails();
		assertThat(details.get("test")).asInstanceOf(MAP)
			.containsEntry("state", "running")
			.hasEntrySatisfying("isolation",
					(isolation) -> assertThat(isolation).asString().endsWith("(network isolated)"));
	}

}
