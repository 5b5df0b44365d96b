package dev.cavesandbox;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The core's TCP {@link LoopbackListeners.Tcp listener} on {@code 127.0.0.1}, for the
 * tests of the Spring AI module (another package): it shows whether anything from a
 * sandboxed command arrived. Tests never send traffic to any other address.
 */
public final class LoopbackTcpListener implements AutoCloseable {

	private static final String CONTROL = "control-from-the-test";

	private final LoopbackListeners.Tcp tcp;

	public LoopbackTcpListener() throws IOException {
		this.tcp = new LoopbackListeners.Tcp(InetAddress.getByName("127.0.0.1"));
	}

	public int port() {
		return this.tcp.port();
	}

	/**
	 * Send a control message from this JVM, unisolated, once the sandboxed attempt is
	 * over, and return every message that arrived up to it, in order: connections queue
	 * in the order they came, so whatever the sandboxed command had sent comes before the
	 * control's. No bound on time decides the result.
	 * @return the messages, the control's last
	 * @throws IOException if the control cannot connect
	 */
	public List<String> messagesUpToControl() throws IOException {
		try (Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), port())) {
			OutputStream out = socket.getOutputStream();
			out.write(CONTROL.getBytes(StandardCharsets.UTF_8));
		}
		return this.tcp.awaitAccepted(CONTROL);
	}

	/**
	 * Return the control message of {@link #messagesUpToControl()}.
	 * @return the control message
	 */
	public static String control() {
		return CONTROL;
	}

	@Override
	public void close() throws IOException {
		this.tcp.close();
	}

}
