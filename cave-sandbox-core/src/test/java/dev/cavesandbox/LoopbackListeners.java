package dev.cavesandbox;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * Test listeners on the host's loopback only: they show whether anything from a child arrived.
 * Tests never send traffic to any other address.
 */
final class LoopbackListeners {

	private LoopbackListeners() {
	}

	/**
	 * A TCP listener on a loopback address; {@link #accepted()} counts the connections that arrive
	 * within the given wait.
	 */
	static final class Tcp implements AutoCloseable {

		private final ServerSocket server;

		Tcp(InetAddress loopback) throws IOException {
			this.server = new ServerSocket();
			this.server.bind(new InetSocketAddress(loopback, 0));
		}

		int port() {
			return this.server.getLocalPort();
		}

		List<String> accepted(int waitMillis) throws IOException {
			List<String> received = new ArrayList<>();
			this.server.setSoTimeout(waitMillis);
			while (true) {
				try (Socket socket = this.server.accept()) {
					socket.setSoTimeout(waitMillis);
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
	 * A UDP socket on a loopback address; {@link #received(int)} returns the datagrams that arrive
	 * within the given wait.
	 */
	static final class Udp implements AutoCloseable {

		private final DatagramSocket socket;

		Udp(InetAddress loopback, int port) throws IOException {
			this.socket = new DatagramSocket(new InetSocketAddress(loopback, port));
		}

		int port() {
			return this.socket.getLocalPort();
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

}
