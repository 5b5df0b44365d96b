package dev.cavesandbox.sample;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A listener of {@link VerifyCommand}, on loopback or at a path it created: what arrived
 * there, in order, up to the control's payload. Its {@code kind} names the attempt of
 * {@link EgressAttempts} ({@code tcp4}, {@code udp}, ...), its {@code target} the port or
 * path given to the child; a listener that cannot be opened on this host says why in
 * {@code skipped}.
 */
abstract class EgressListener implements AutoCloseable {

	final String kind;

	String label;

	String target = "";

	@Nullable String skipped;

	EgressListener(String kind, String label) {
		this.kind = kind;
		this.label = label;
	}

	/**
	 * Open one listener per attempt: TCP on 127.0.0.1, ::1 and (for ::ffff:127.0.0.1)
	 * 127.0.0.1 again, UDP and DNS on 127.0.0.1, a unix socket at the path.
	 * @param socket the path of the unix socket, in a directory of the command's
	 * @return the listeners, in the order of the report
	 * @throws IOException a UDP or unix listener could not be opened
	 */
	static List<EgressListener> openAll(Path socket) throws IOException {
		InetAddress ipv4 = InetAddress.getByAddress(new byte[] { 127, 0, 0, 1 });
		InetAddress ipv6 = InetAddress.getByAddress(new byte[] { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 });
		List<EgressListener> listeners = new ArrayList<>();
		listeners.add(new Tcp("tcp4", "TCP 127.0.0.1", ipv4, null));
		listeners.add(new Tcp("tcp6", "TCP [::1]", ipv6, null));
		listeners.add(new Tcp("tcp-mapped", "TCP [::ffff:127.0.0.1]", ipv4, ipv6Unavailable()));
		listeners.add(new Udp("udp", "UDP 127.0.0.1", ipv4));
		listeners.add(new Udp("dns", "DNS query, UDP 127.0.0.1", ipv4));
		listeners.add(new Unix("unix", "unix socket " + socket, socket));
		return listeners;
	}

	/**
	 * Return why this JVM cannot connect an AF_INET6 socket to an IPv4-mapped address, or
	 * {@code null} if it can.
	 */
	private static @Nullable String ipv6Unavailable() {
		try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.INET6)) {
			return null;
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "this JVM has no IPv6 sockets (" + ex + ")";
		}
	}

	/**
	 * Collect what arrives until the control's payload does.
	 * @param control the control's payload
	 * @param limit how long to wait for it at most
	 * @return what arrived before the control (anything else than the control), or
	 * {@code null} if the control did not arrive within the limit
	 */
	@Nullable List<String> arrivalsUntil(byte[] control, Duration limit) throws IOException {
		List<String> arrived = new ArrayList<>();
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < deadline) {
			byte[] next = next();
			if (next == null) {
				continue;
			}
			if (Arrays.equals(next, control)) {
				return arrived;
			}
			arrived.add(printable(next));
		}
		return null;
	}

	/**
	 * Return the next arrival, or {@code null} if none came within a short wait.
	 */
	abstract byte @Nullable [] next() throws IOException;

	@Override
	public abstract void close();

	private static String printable(byte[] bytes) {
		StringBuilder text = new StringBuilder("\"");
		for (byte b : bytes) {
			text.append((b >= 0x20 && b < 0x7f) ? String.valueOf((char) b) : ".");
		}
		return text.append("\"").toString();
	}

	private static final class Tcp extends EgressListener {

		private @Nullable ServerSocket server;

		Tcp(String kind, String label, InetAddress address, @Nullable String skipped) {
			super(kind, label);
			this.skipped = skipped;
			if (skipped != null) {
				return;
			}
			try {
				ServerSocket server = new ServerSocket();
				server.bind(new InetSocketAddress(address, 0));
				server.setSoTimeout(200);
				this.server = server;
				this.target = String.valueOf(server.getLocalPort());
				this.label = label + ":" + this.target;
			}
			catch (IOException ex) {
				this.skipped = "this host has no " + address.getHostAddress() + " to listen on (" + ex + ")";
			}
		}

		@Override
		byte @Nullable [] next() throws IOException {
			try (Socket connection = this.server.accept()) {
				connection.setSoTimeout(5000);
				return connection.getInputStream().readAllBytes();
			}
			catch (SocketTimeoutException ex) {
				return null;
			}
		}

		@Override
		public void close() {
			try {
				if (this.server != null) {
					this.server.close();
				}
			}
			catch (IOException ex) {
				// closing
			}
		}

	}

	private static final class Udp extends EgressListener {

		private final DatagramSocket socket;

		Udp(String kind, String label, InetAddress address) throws IOException {
			super(kind, label);
			this.socket = new DatagramSocket(new InetSocketAddress(address, 0));
			this.socket.setSoTimeout(200);
			this.target = String.valueOf(this.socket.getLocalPort());
			this.label = label + ":" + this.target;
		}

		@Override
		@Nullable List<String> arrivalsUntil(byte[] control, Duration limit) throws IOException {
			// The DNS listener expects the control's query, not its plain payload.
			return super.arrivalsUntil(this.kind.equals("dns") ? EgressAttempts.dnsQuery("control") : control, limit);
		}

		@Override
		byte @Nullable [] next() throws IOException {
			DatagramPacket packet = new DatagramPacket(new byte[2048], 2048);
			try {
				this.socket.receive(packet);
				return Arrays.copyOf(packet.getData(), packet.getLength());
			}
			catch (SocketTimeoutException ex) {
				return null;
			}
		}

		@Override
		public void close() {
			this.socket.close();
		}

	}

	private static final class Unix extends EgressListener {

		private final ServerSocketChannel server;

		Unix(String kind, String label, Path path) throws IOException {
			super(kind, label);
			this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
			this.server.bind(UnixDomainSocketAddress.of(path));
			this.server.configureBlocking(false);
			this.target = path.toString();
		}

		@Override
		byte @Nullable [] next() throws IOException {
			SocketChannel channel = this.server.accept();
			if (channel == null) {
				try {
					Thread.sleep(20);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IOException("interrupted", ex);
				}
				return null;
			}
			try (channel) {
				channel.configureBlocking(true);
				ByteBuffer buffer = ByteBuffer.allocate(2048);
				while (channel.read(buffer) > 0 && buffer.hasRemaining()) {
					// until the client closes
				}
				return Arrays.copyOf(buffer.array(), buffer.position());
			}
		}

		@Override
		public void close() {
			try {
				this.server.close();
			}
			catch (IOException ex) {
				// closing
			}
		}

	}

}
