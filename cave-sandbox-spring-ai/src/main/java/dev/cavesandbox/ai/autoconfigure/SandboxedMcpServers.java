package dev.cavesandbox.ai.autoconfigure;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.ai.SandboxedStdioClientTransport;

/**
 * The transports of the stdio MCP servers that run in the sandbox, as
 * {@link SandboxedStdioTransportsPostProcessor} created them, and their
 * {@linkplain #report() state}: what the health indicators of both Spring Boot lines
 * report ({@link SandboxedMcpHealthIndicator} on Boot 4, its counterpart in
 * {@code cave-sandbox-spring-boot3-autoconfigure} on Boot 3.5).
 */
public final class SandboxedMcpServers {

	private final List<SandboxedStdioClientTransport> transports = new CopyOnWriteArrayList<>();

	SandboxedMcpServers() {
	}

	void add(SandboxedStdioClientTransport transport) {
		this.transports.add(transport);
	}

	/**
	 * Return the transports, in the order of the connections.
	 * @return the transports
	 */
	public List<SandboxedStdioClientTransport> transports() {
		return List.copyOf(this.transports);
	}

	/**
	 * Return the state of each server, by connection name: its {@code state},
	 * {@code not started} (its client has not connected yet), {@code running} (with the
	 * {@code pid} and the {@code isolation} applied), {@code exited} (with the
	 * {@code exitCode}) or {@code failed to start} (with the {@code error}).
	 * @return the report
	 */
	public Report report() {
		boolean up = true;
		Map<String, Map<String, Object>> servers = new LinkedHashMap<>();
		for (SandboxedStdioClientTransport server : this.transports) {
			Map<String, Object> details = new LinkedHashMap<>();
			Optional<SandboxedProcess> process = server.process();
			Optional<RuntimeException> failure = server.startFailure();
			if (failure.isPresent()) {
				details.put("state", "failed to start");
				details.put("error", String.valueOf(failure.get().getMessage()));
				up = false;
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
				up = false;
			}
			servers.put(server.name(), Collections.unmodifiableMap(details));
		}
		return new Report(up, Collections.unmodifiableMap(servers));
	}

	/**
	 * The state of the servers.
	 *
	 * @param up whether every server that was started is running (none exited or failed
	 * to start)
	 * @param servers the details of each server, by connection name
	 */
	public record Report(boolean up, Map<String, Map<String, Object>> servers) {

	}

}
