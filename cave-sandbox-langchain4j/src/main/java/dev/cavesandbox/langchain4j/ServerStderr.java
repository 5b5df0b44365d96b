package dev.cavesandbox.langchain4j;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * An MCP server's stderr, read on a daemon thread of its own: each line logged at INFO
 * under {@link SandboxedStdioMcpTransport}'s logger, the last {@value #LINES} lines kept
 * (each cut to {@value #LINE_LENGTH} characters) for the message that says why the server
 * ended.
 */
final class ServerStderr {

	private static final Log logger = LogFactory.getLog(SandboxedStdioMcpTransport.class);

	static final int LINES = 5;

	static final int LINE_LENGTH = 300;

	private final String name;

	private final Deque<String> tail = new ArrayDeque<>();

	private final Thread reader;

	ServerStderr(String name, InputStream stderr) {
		this.name = name;
		this.reader = SandboxedStdioMcpTransport.daemon(name, "stderr", () -> read(stderr));
		this.reader.start();
	}

	/**
	 * Wait for the end of stderr, at most the given time.
	 * @param limit how long at most
	 * @throws InterruptedException the wait was interrupted
	 */
	void awaitEnd(Duration limit) throws InterruptedException {
		this.reader.join(limit.toMillis());
	}

	/**
	 * Return the last lines read so far, oldest first.
	 * @return at most {@value #LINES} lines
	 */
	List<String> tail() {
		synchronized (this.tail) {
			return List.copyOf(this.tail);
		}
	}

	private void read(InputStream stderr) {
		try (BufferedReader lines = new BufferedReader(new InputStreamReader(stderr, StandardCharsets.UTF_8))) {
			for (String line = lines.readLine(); line != null; line = lines.readLine()) {
				logger.info("MCP server '" + this.name + "' stderr: " + line);
				synchronized (this.tail) {
					if (this.tail.size() == LINES) {
						this.tail.removeFirst();
					}
					this.tail.addLast((line.length() <= LINE_LENGTH) ? line : line.substring(0, LINE_LENGTH) + "...");
				}
			}
		}
		catch (IOException ex) {
			logger.debug("MCP server '" + this.name + "': reading its stderr ended", ex);
		}
	}

}
