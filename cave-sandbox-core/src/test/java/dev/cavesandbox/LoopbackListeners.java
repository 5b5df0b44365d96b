package dev.cavesandbox;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.awaitility.Awaitility.await;

/**
 * Test listeners on the host's loopback only: they show whether anything from a child
 * arrived. Tests never send traffic to any other address.
 * <p>
 * To show that nothing arrived from an isolated command, a test lets the command finish,
 * then runs an unisolated control that sends a different message, and awaits that
 * message: connections and datagrams queue in the order they came, so whatever the
 * isolated command had sent would be returned with (before) the control's. No bound on
 * time decides the result.
 */
final class LoopbackListeners {

	private LoopbackListeners() {
	}

	/**
	 * A TCP listener on a loopback address; {@link #accepted()} counts the connections
	 * that arrive within the given wait.
	 */
	static final class Tcp implements AutoCloseable {

		private final ServerSocket server;

		private final List<InetAddress> peers = new ArrayList<>();

		Tcp(InetAddress loopback) throws IOException {
			this.server = new ServerSocket();
			this.server.bind(new InetSocketAddress(loopback, 0));
		}

		int port() {
			return this.server.getLocalPort();
		}

		/**
		 * Return the peer addresses of the connections that {@link #accepted(int)} has
		 * accepted so far, in order.
		 */
		List<InetAddress> peers() {
			return List.copyOf(this.peers);
		}

		/**
		 * Wait, with a generous limit, until a connection sent the expected message.
		 * @param expected the message
		 * @return every message accepted until then, in order
		 */
		List<String> awaitAccepted(String expected) {
			return awaitArrival(expected, this::accepted);
		}

		List<String> accepted(int waitMillis) throws IOException {
			List<String> received = new ArrayList<>();
			this.server.setSoTimeout(waitMillis);
			while (true) {
				try (Socket socket = this.server.accept()) {
					socket.setSoTimeout(waitMillis);
					this.peers.add(socket.getInetAddress());
					received.add(new String(socket.getInputStream().readAllBytes()));
				}
				catch (SocketTimeoutException ex) {
					return received;
				}
			}
		}

		@Override
		public void close() throws IOException {
			this.server.close();
		}

	}

	/**
	 * A UDP socket on a loopback address; {@link #received(int)} returns the datagrams
	 * that arrive within the given wait.
	 */
	static final class Udp implements AutoCloseable {

		private final DatagramSocket socket;

		Udp(InetAddress loopback, int port) throws IOException {
			this.socket = new DatagramSocket(new InetSocketAddress(loopback, port));
		}

		int port() {
			return this.socket.getLocalPort();
		}

		/**
		 * Wait, with a generous limit, until a datagram that contains the expected text
		 * arrived.
		 * @param expected the text
		 * @return every datagram received until then, in order
		 */
		List<String> awaitReceived(String expected) {
			return awaitArrival(expected, this::received);
		}

		List<String> received(int waitMillis) throws IOException {
			List<String> received = new ArrayList<>();
			this.socket.setSoTimeout(waitMillis);
			byte[] buffer = new byte[2048];
			while (true) {
				DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
				try {
					this.socket.receive(packet);
					received.add(new String(packet.getData(), 0, packet.getLength()));
				}
				catch (SocketTimeoutException ex) {
					return received;
				}
			}
		}

		@Override
		public void close() {
			this.socket.close();
		}

	}

	/**
	 * Poll the listener until a message that contains the expected text arrived, for at
	 * most 30 seconds (a limit for a loaded machine, not a measure).
	 */
	private static List<String> awaitArrival(String expected, IOFunction poll) {
		List<String> arrived = new ArrayList<>();
		await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
			arrived.addAll(poll.apply(100));
			return arrived.stream().anyMatch((message) -> message.contains(expected));
		});
		return List.copyOf(arrived);
	}

	@FunctionalInterface
	private interface IOFunction {

		List<String> apply(int waitMillis) throws IOException;

	}

}
