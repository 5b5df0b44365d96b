package dev.cavesandbox.ai.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.ai.SandboxedStdioClientTransport;

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
		Health.Builder health = Health.up();
		for (SandboxedStdioClientTransport server : this.servers.transports()) {
			Map<String, Object> details = new LinkedHashMap<>();
			Optional<SandboxedProcess> process = server.process();
			Optional<RuntimeException> failure = server.startFailure();
			if (failure.isPresent()) {
				details.put("state", "failed to start");
				details.put("error", String.valueOf(failure.get().getMessage()));
				health.down();
			}
			else if (process.isEmpty()) {
				details.put("state", "not started");
			}
			else if (process.get().isAlive()) {
				details.put("state", "running");
				details.put("pid", process.get().pid());
				details.put("isolation", process.get().isolation().toString());
			}
			else {
				details.put("state", "exited");
				details.put("exitCode", process.get().exitCode().orElse(-1));
				health.down();
			}
			health.withDetail(server.name(), details);
		}
		return health.build();
	}

}
