package dev.cavesandbox.ai.autoconfigure;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code caveSandboxMcp} health indicator: the stdio MCP servers that run in the
 * sandbox, one detail per connection with its {@code state}: {@code not started} (its
 * client has not connected yet), {@code running} (with the {@code pid} and the
 * {@code isolation} applied), {@code exited} (with the {@code exitCode}) or
 * {@code failed to start} (with the {@code error}).
 * <ul>
 * <li>{@link Status#UP UP}: every server that was started is running;</li>
 * <li>{@link Status#DOWN DOWN}: a server exited or could not start.</li>
 * </ul>
 */
public final class SandboxedMcpHealthIndicator implements HealthIndicator {

	private final SandboxedMcpServers servers;

	SandboxedMcpHealthIndicator(SandboxedMcpServers servers) {
		this.servers = servers;
	}

	@Override
	public Health health() {
		SandboxedMcpServers.Report report = this.servers.report();
		return (report.up() ? Health.up() : Health.down()).withDetails(report.servers()).build();
	}

}
