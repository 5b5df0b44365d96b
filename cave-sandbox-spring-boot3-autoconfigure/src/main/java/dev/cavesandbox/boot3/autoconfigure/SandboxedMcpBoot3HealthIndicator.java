package dev.cavesandbox.boot3.autoconfigure;

import dev.cavesandbox.ai.autoconfigure.SandboxedMcpServers;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The {@code caveSandboxMcp} health indicator on Spring Boot 3.5: the stdio MCP servers
 * that run in the sandbox ({@code cave-sandbox-spring-ai}). The same statuses and details
 * as the Spring Boot 4 indicator ({@code SandboxedMcpHealthIndicator}), in
 * {@code spring-boot-actuator}'s health types: one detail per connection with its
 * {@code state} ({@link SandboxedMcpServers#report()});
 * <ul>
 * <li>{@link Status#UP UP}: every server that was started is running;</li>
 * <li>{@link Status#DOWN DOWN}: a server exited or could not start.</li>
 * </ul>
 */
public final class SandboxedMcpBoot3HealthIndicator implements HealthIndicator {

	private final SandboxedMcpServers servers;

	SandboxedMcpBoot3HealthIndicator(SandboxedMcpServers servers) {
		this.servers = servers;
	}

	@Override
	public Health health() {
		SandboxedMcpServers.Report report = this.servers.report();
		return (report.up() ? Health.up() : Health.down()).withDetails(report.servers()).build();
	}

}
