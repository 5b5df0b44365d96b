package dev.cavesandbox.langchain4j;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import dev.cavesandbox.langchain4j.CappedLineReader.Line;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * An MCP server's stderr, read on a daemon thread of its own: each line cut to
 * {@value #LINE_LENGTH} bytes of UTF-8 (then {@code ...}; the rest of a longer line is
 * skipped without being held), logged at INFO under {@link SandboxedStdioMcpTransport}'s
 * logger, the last {@value #LINES} lines kept for the message that says why the server
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
		try (CappedLineReader lines = new CappedLineReader(stderr, LINE_LENGTH, LINE_LENGTH)) {
			for (Line line = lines.next(); line != null; line = lines.next()) {
				String text = line.cut() ? line.text() + "..." : line.text();
				logger.info("MCP server '" + this.name + "' stderr: " + text);
				synchronized (this.tail) {
					if (this.tail.size() == LINES) {
						this.tail.removeFirst();
					}
					this.tail.addLast(text);
				}
			}
		}
		catch (IOException ex) {
			logger.debug("MCP server '" + this.name + "': reading its stderr ended", ex);
		}
	}

}
