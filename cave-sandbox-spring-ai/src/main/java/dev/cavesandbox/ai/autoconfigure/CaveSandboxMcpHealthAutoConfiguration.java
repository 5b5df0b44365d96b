package dev.cavesandbox.ai.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the {@code caveSandboxMcp} {@link SandboxedMcpHealthIndicator
 * health indicator}, active when {@code spring-boot-health} is on the class path and the
 * stdio MCP servers run in the sandbox;
 * {@code management.health.cave-sandbox-mcp.enabled=false} switches it off.
 */
@AutoConfiguration(after = CaveSandboxMcpAutoConfiguration.class,
		beforeName = "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration")
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("cave-sandbox-mcp")
@ConditionalOnBean(SandboxedMcpServers.class)
public final class CaveSandboxMcpHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "caveSandboxMcpHealthIndicator")
	SandboxedMcpHealthIndicator caveSandboxMcpHealthIndicator(SandboxedMcpServers servers) {
		return new SandboxedMcpHealthIndicator(servers);
	}

}
