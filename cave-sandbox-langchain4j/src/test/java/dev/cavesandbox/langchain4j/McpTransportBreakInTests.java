package dev.cavesandbox.langchain4j;

import java.lang.management.ManagementFactory;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.MarkedProcesses;
import dev.cavesandbox.SandboxedProcess;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.mcp.client.DefaultMcpClient;
import dev.langchain4j.mcp.client.transport.McpOperationHandler;
import dev.langchain4j.mcp.protocol.McpPingRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Red team 5's attacks on {@link SandboxedStdioMcpTransport} and
 * {@link SandboxedCodeExecutionEngine} (issue 29), as a hostile MCP server or hostile
 * code in this host's real sandbox. What held is asserted; what got through is a disabled
 * test that says what was seen.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class McpTransportBreakInTests {

	private static final Duration BOUND = Duration.ofSeconds(60);

	private final IsolatedExecutor executor = TestSandbox.executor();

	private SandboxedStdioMcpTransport transport(String name, String script) {
		return new SandboxedStdioMcpTransport(name, this.executor,
				McpServerRequests.request(List.of("sh", "-c", script), Map.of(), List.of(), List.of()));
	}

	private static McpOperationHandler handler(SandboxedStdioMcpTransport transport) {
		return new McpOperationHandler(new ConcurrentHashMap<>(), List::of, transport, null, () -> {
		});
	}

	/**
	 * A server that dies in the middle of its answer: the half line is no message, and
	 * the pending call fails saying the exit code.
	 */
	@Test
	void aServerThatExitsMidMessageFailsThePendingCall() throws Exception {
		SandboxedStdioMcpTransport transport = transport("half",
				"read line; printf '{\"jsonrpc\":\"2.0\",\"id\":1,\"res'; exit 3");
		try {
			transport.start(handler(transport));
			CompletableFuture<JsonNode> answer = transport.executeOperationWithResponse(new McpPingRequest(1L));
			assertThat(answer).failsWithin(BOUND)
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessageContaining("exit code 3");
		}
		finally {
			transport.close();
		}
	}

	/**
	 * A server that tries a session of its own (the sandbox refuses setsid), forks a
	 * double-forked daemon that ignores SIGTERM and SIGHUP, ignores SIGTERM itself and
	 * never answers: close() returns and nothing of the tree is left.
	 */
	@Test
	void aServerThatForksDaemonsLeavesNothingAfterClose() throws Exception {
		String marker = "red5-mcp-" + UUID.randomUUID();
		SandboxedStdioMcpTransport transport = transport("forker",
				"setsid sh -c 'while :; do sleep 1; done' " + marker + "-a &"
						+ " (sh -c 'trap \"\" TERM HUP; while :; do sleep 1; done' " + marker + "-b &) ;"
						+ " exec sh -c 'trap \"\" TERM; while read x; do :; done' " + marker + "-c");
		transport.start(handler(transport));
		SandboxedProcess process = transport.process().orElseThrow();
		// The launcher's processes carry the script too: the server's own run as the
		// sandbox's user.
		for (int i = 0; i < 100 && sandboxed(marker) < 2; i++) {
			Thread.sleep(100);
		}
		assertThat(sandboxed(marker)).as("%s", MarkedProcesses.leftovers(marker)).isGreaterThanOrEqualTo(2);
		transport.close();
		assertThat(process.isAlive()).isFalse();
		assertThat(process.survivors()).isEmpty();
		assertThat(MarkedProcesses.leftovers(marker)).isEmpty();
	}

	private static long sandboxed(String marker) throws java.io.IOException {
		return MarkedProcesses.leftovers(marker).stream().filter((line) -> !line.endsWith(" 0")).count();
	}

	/**
	 * A raw server (not the test's script) that connects to a listener this test opened
	 * on 127.0.0.1: nothing arrives.
	 */
	@Test
	void aServerCannotReachTheHostsLoopback() throws Exception {
		try (ServerSocketChannel listener = TestSandbox.loopbackListener()) {
			int port = TestSandbox.port(listener);
			SandboxedStdioMcpTransport transport = transport("dialer",
					"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " + port + "), 2)' >&2;"
							+ " echo \"exit $?\" >&2; exec cat > /dev/null");
			try {
				transport.start(handler(transport));
				Thread.sleep(3000);
			}
			finally {
				transport.close();
			}
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("the MCP server reached the host's listener").isNull();
			}
		}
	}

	/**
	 * Code that forks a child which outlives its parent and floods stdout: the answer is
	 * cut to the output size, and nothing of the code runs after the call.
	 */
	@Test
	void hostileCodeIsCutAndLeavesNothingRunning() throws Exception {
		String marker = "red5-code-" + UUID.randomUUID();
		SandboxedCodeExecutionEngine engine = new SandboxedCodeExecutionEngine(this.executor, "shell", List.of("sh"));
		String answer = engine.execute("setsid sh -c 'while :; do sleep 1; done' " + marker
				+ " & head -c 50000000 /dev/zero | tr '\\0' a; echo");
		assertThat(answer).contains("[output truncated at ").hasSizeLessThan(20_000);
		assertThat(MarkedProcesses.leftovers(marker)).isEmpty();
	}

	/**
	 * A server that never answers: a call pending when the client closes fails at once,
	 * rather than keeping the caller's thread until the tool-execution timeout.
	 */
	@Test
	void aCallPendingWhenTheTransportClosesFails() throws Exception {
		SandboxedStdioMcpTransport transport = transport("silent", "exec cat > /dev/null");
		transport.start(handler(transport));
		CompletableFuture<JsonNode> answer = transport.executeOperationWithResponse(new McpPingRequest(7L));
		transport.close();
		assertThat(transport.process().orElseThrow().isAlive()).isFalse();
		// failsWithin also passes on a TimeoutException: the failure must be the
		// future's.
		assertThat(answer).failsWithin(Duration.ofSeconds(5))
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("MCP server 'silent' was closed");
	}

	/**
	 * The same through LangChain4j's client: a tool call pending when the client is
	 * closed.
	 */
	@Test
	void aToolCallPendingWhenTheClientClosesReturns() throws Exception {
		SandboxedStdioMcpTransport transport = transport("silent-client",
				"read line; echo '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\","
						+ "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}';"
						+ " exec cat > /dev/null");
		DefaultMcpClient client = DefaultMcpClient.builder()
			.key("silent")
			.transport(transport)
			.initializationTimeout(Duration.ofSeconds(20))
			.toolExecutionTimeout(BOUND)
			.autoHealthCheck(false)
			.build();
		AtomicReference<Object> outcome = new AtomicReference<>();
		Thread caller = new Thread(() -> {
			try {
				outcome
					.set(client.executeTool(ToolExecutionRequest.builder().id("1").name("add").arguments("{}").build())
						.resultText());
			}
			catch (RuntimeException ex) {
				outcome.set(ex);
			}
		});
		caller.setDaemon(true);
		caller.start();
		Thread.sleep(1000);
		client.close();
		caller.join(TimeUnit.SECONDS.toMillis(5));
		assertThat(caller.isAlive()).as("the caller's thread is still blocked in executeTool").isFalse();
		assertThat(outcome.get()).isInstanceOf(RuntimeException.class)
			.asString()
			.contains("MCP server 'silent-client' was closed");
	}

	/**
	 * A server that writes one line of 64 MB without a line break, on stdout or stderr,
	 * and keeps running: the reader holds at most a bounded line. On stdout the line
	 * passes the cap, the server fails and its reader ends; on stderr the reader goes on,
	 * and a last short line says that the whole line went through it.
	 */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aLineWithoutEndIsNotHeldWhole(CapturedOutput output) throws Exception {
		Map<String, Long> allocated = new java.util.TreeMap<>();
		for (String stream : List.of("stdout", "stderr")) {
			String redirect = stream.equals("stdout") ? "" : " >&2";
			SandboxedStdioMcpTransport transport = transport("flood-" + stream,
					"head -c 64000000 /dev/zero | tr '\\0' a" + redirect + "; echo" + redirect + "; echo flood-done"
							+ redirect + "; exec sleep 300");
			try {
				transport.start(handler(transport));
				String done = "MCP server 'flood-" + stream + "' stderr: flood-done";
				allocated.put(stream, allocatedByThread("cave-sandbox-mcp-flood-" + stream + "-" + stream,
						() -> output.getAll().contains(done)));
			}
			finally {
				transport.close();
			}
		}
		System.out.println("bytes allocated by the readers: " + allocated);
		assertThat(allocated.values()).as("bytes the readers allocated: %s", allocated)
			.allSatisfy((bytes) -> assertThat(bytes).isLessThan(16L * 1024 * 1024));
	}

	/**
	 * The most a thread allocated until it ended (after it was seen), the condition held,
	 * or the bound passed.
	 */
	private static long allocatedByThread(String name, BooleanSupplier over) throws InterruptedException {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		long allocated = 0;
		boolean seen = false;
		long deadline = System.nanoTime() + BOUND.toNanos();
		while (System.nanoTime() < deadline) {
			boolean alive = false;
			for (Thread thread : Thread.getAllStackTraces().keySet()) {
				if (thread.getName().equals(name)) {
					alive = true;
					allocated = Math.max(allocated, threads.getThreadAllocatedBytes(thread.getId()));
				}
			}
			if ((seen && !alive) || over.getAsBoolean()) {
				return allocated;
			}
			seen |= alive;
			Thread.sleep(20);
		}
		return allocated;
	}

}
