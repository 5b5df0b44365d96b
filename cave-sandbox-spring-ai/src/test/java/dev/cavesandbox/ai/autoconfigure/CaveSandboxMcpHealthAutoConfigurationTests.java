package dev.cavesandbox.ai.autoconfigure;

import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.ai.McpTestServer;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import io.modelcontextprotocol.client.McpSyncClient;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.ai.mcp.client.common.autoconfigure.McpClientAutoConfiguration;
import org.springframework.ai.mcp.client.common.autoconfigure.StdioTransportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.actuate.endpoint.CompositeHealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code caveSandboxMcp} health indicator of the sandboxed stdio MCP servers, with
 * the tests' MCP server in this host's real sandbox. Spring AI's clients are not
 * initialized at startup here, so that each state can be seen.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class CaveSandboxMcpHealthAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class,
				CaveSandboxMcpAutoConfiguration.class, CaveSandboxMcpHealthAutoConfiguration.class,
				StdioTransportAutoConfiguration.class, McpClientAutoConfiguration.class))
		.withPropertyValues(McpTestServer.connectionProperties())
		.withPropertyValues("spring.ai.mcp.client.initialized=false");

	@Test
	@SuppressWarnings("unchecked")
	void reportsEachServerNotStartedThenRunningWithItsIsolationThenExited() {
		this.runner.run((context) -> {
			HealthIndicator indicator = context.getBean("caveSandboxMcpHealthIndicator", HealthIndicator.class);
			Health notStarted = indicator.health();
			assertThat(notStarted.getStatus()).isEqualTo(Status.UP);
			assertThat(notStarted.getDetails()).containsEntry("test", Map.of("state", "not started"));

			McpSyncClient client = ((List<McpSyncClient>) context.getBean("mcpSyncClients", List.class)).get(0);
			client.initialize();
			Health running = indicator.health();
			assertThat(running.getStatus()).isEqualTo(Status.UP);
			Map<String, Object> server = (Map<String, Object>) running.getDetails().get("test");
			assertThat(server).containsEntry("state", "running")
				.containsEntry("isolation", context.getBean(IsolatedExecutor.class).isolation().toString())
				.containsKey("pid");

			client.closeGracefully();
			Health exited = indicator.health();
			assertThat(exited.getStatus()).isEqualTo(Status.DOWN);
			assertThat(exited.getDetails()).containsEntry("test", Map.of("state", "exited", "exitCode", 0));
		});
	}

	@Test
	void appearsAsTheCaveSandboxMcpComponentOfTheHealthEndpoint() {
		this.runner
			.withConfiguration(AutoConfigurations.of(HealthContributorAutoConfiguration.class,
					HealthContributorRegistryAutoConfiguration.class, HealthEndpointAutoConfiguration.class))
			.run((context) -> {
				CompositeHealthDescriptor health = (CompositeHealthDescriptor) context.getBean(HealthEndpoint.class)
					.health();
				assertThat(health.getComponents()).containsKey("caveSandboxMcp");
				assertThat(health.getComponents().get("caveSandboxMcp").getStatus()).isEqualTo(Status.UP);
			});
	}

	@Test
	void canBeSwitchedOff() {
		this.runner.withPropertyValues("management.health.cave-sandbox-mcp.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(SandboxedMcpServers.class)
				.doesNotHaveBean("caveSandboxMcpHealthIndicator"));
	}

	@Test
	void backsOffWithoutSpringBootHealth() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(SandboxedMcpServers.class)
				.doesNotHaveBean("caveSandboxMcpHealthIndicator"));
	}

}
