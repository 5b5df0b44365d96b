package dev.cavesandbox.langchain4j;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.SandboxSettings;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the tests of this module share: the executor of this host's real sandbox (probed
 * once, never closed: what it still runs dies with the test JVM), the tiny MCP server
 * script {@code mcp/server.py} of the test resources, and a listener on the host's
 * loopback that shows whether a sandboxed program reached it.
 */
public final class TestSandbox {

	private static @Nullable IsolatedExecutor executor;

	private TestSandbox() {
	}

	/**
	 * Return the shared executor, which isolates.
	 * @return the executor
	 */
	public static synchronized IsolatedExecutor executor() {
		if (executor == null) {
			IsolatedExecutor created = IsolatedExecutors.create(SandboxSettings.builder()
				.timeout(Duration.ofSeconds(20))
				.killGracePeriod(Duration.ofMillis(200))
				.build());
			assertThat(created.isolation().networkIsolated()).as("isolation of %s", created).isTrue();
			executor = created;
		}
		return executor;
	}

	/**
	 * Return the MCP server script; the sandbox sees it only when its directory is a
	 * readable path.
	 * @return its real path
	 */
	public static Path mcpServerScript() {
		try {
			URL resource = TestSandbox.class.getResource("/mcp/server.py");
			return Path.of(resource.toURI()).toRealPath();
		}
		catch (IOException | URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Open a non-blocking TCP listener on {@code 127.0.0.1}; {@code accept()} returns
	 * {@code null} when nothing connected.
	 * @return the listener
	 * @throws IOException if it cannot be opened
	 */
	public static ServerSocketChannel loopbackListener() throws IOException {
		ServerSocketChannel listener = ServerSocketChannel.open();
		listener.bind(new InetSocketAddress("127.0.0.1", 0));
		listener.configureBlocking(false);
		return listener;
	}

	/**
	 * Return the port of a listener.
	 * @param listener the listener
	 * @return its port
	 * @throws IOException if its address cannot be read
	 */
	public static int port(ServerSocketChannel listener) throws IOException {
		return ((InetSocketAddress) listener.getLocalAddress()).getPort();
	}

	/**
	 * Return an exception and its causes, one a line, for assertions on what a failure
	 * says.
	 * @param failure the exception
	 * @return each exception of the chain as its {@code toString()}
	 */
	public static String messages(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			messages.append(cause).append('\n');
		}
		return messages.toString();
	}

}
