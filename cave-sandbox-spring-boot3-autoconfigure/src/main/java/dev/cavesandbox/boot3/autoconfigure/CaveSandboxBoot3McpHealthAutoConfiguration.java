package dev.cavesandbox.boot3.autoconfigure;

import dev.cavesandbox.ai.autoconfigure.SandboxedMcpServers;

import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the {@code caveSandboxMcp}
 * {@link SandboxedMcpBoot3HealthIndicator health indicator} on Spring Boot 3.5, active
 * when {@code spring-boot-actuator} has its Boot 3 health types (on Boot 4
 * {@code CaveSandboxMcpHealthAutoConfiguration} of {@code cave-sandbox-spring-ai} takes
 * over) and the stdio MCP servers run in the sandbox;
 * {@code management.health.cave-sandbox-mcp.enabled=false} switches it off.
 */
@AutoConfiguration(afterName = "dev.cavesandbox.ai.autoconfigure.CaveSandboxMcpAutoConfiguration",
		beforeName = "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass({ HealthIndicator.class, SandboxedMcpServers.class })
@ConditionalOnEnabledHealthIndicator("cave-sandbox-mcp")
@ConditionalOnBean(SandboxedMcpServers.class)
public final class CaveSandboxBoot3McpHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "caveSandboxMcpHealthIndicator")
	SandboxedMcpBoot3HealthIndicator caveSandboxMcpHealthIndicator(SandboxedMcpServers servers) {
		return new SandboxedMcpBoot3HealthIndicator(servers);
	}

}
