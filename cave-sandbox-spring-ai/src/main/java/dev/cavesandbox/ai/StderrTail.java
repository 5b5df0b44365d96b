package dev.cavesandbox.ai;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The reader of an MCP server's stderr, on a thread of its own: logs each line at INFO
 * under {@link SandboxedStdioClientTransport}'s logger and keeps the last 5 lines, each
 * cut to 300 characters, for the message that says why the server ended.
 */
final class StderrTail {

	private static final Log logger = LogFactory.getLog(SandboxedStdioClientTransport.class);

	private static final int LINES = 5;

	private static final int LINE_LENGTH = 300;

	private final String name;

	private final BooleanSupplier closing;

	private final Thread thread;

	private final Deque<String> lastLines = new ArrayDeque<>();

	/**
	 * Create the reader, not started yet.
	 * @param name the name of the connection
	 * @param stderr the server's stderr
	 * @param closing whether the transport is closing (a failed read is then expected)
	 */
	StderrTail(String name, InputStream stderr, BooleanSupplier closing) {
		this.name = name;
		this.closing = closing;
		this.thread = SandboxedStdioClientTransport.thread(name, "stderr", () -> read(stderr));
	}

	void start() {
		this.thread.start();
	}

	/**
	 * Wait for the end of stderr, at most the given time.
	 * @param limit how long at most
	 * @throws InterruptedException the wait was interrupted
	 */
	void awaitEnd(Duration limit) throws InterruptedException {
		this.thread.join(limit.toMillis());
	}

	/**
	 * Return the last lines read so far.
	 * @return up to 5 lines, oldest first
	 */
	List<String> lastLines() {
		synchronized (this.lastLines) {
			return List.copyOf(this.lastLines);
		}
	}

	private void read(InputStream stderr) {
		try (BufferedReader reader = new BufferedReader(new InputStreamReader(stderr, StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				logger.info("MCP server '" + this.name + "' stderr: " + line);
				synchronized (this.lastLines) {
					if (this.lastLines.size() == LINES) {
						this.lastLines.removeFirst();
					}
					this.lastLines
						.addLast((line.length() > LINE_LENGTH) ? line.substring(0, LINE_LENGTH) + "..." : line);
				}
			}
		}
		catch (IOException ex) {
			if (!this.closing.getAsBoolean()) {
				logger.debug("MCP server '" + this.name + "': reading its stderr failed", ex);
			}
		}
	}

}
