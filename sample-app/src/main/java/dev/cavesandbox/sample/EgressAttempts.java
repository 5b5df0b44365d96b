package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The egress attempts of {@code verify}, run as the main class of a child JVM inside the
 * sandbox (and once outside, as the control). It uses nothing but the JDK, and is one
 * class without nested or anonymous classes, so that {@link EgressChild} can write its
 * bytes into the command's working directory and run it with {@code java -cp .}: a
 * JRE-only image has no shell or Python to do this.
 * <p>
 * Arguments: the role ({@code sandboxed} or {@code control}), then one
 * {@code KIND=TARGET} per attempt, where KIND is {@code tcp4}, {@code tcp6},
 * {@code tcp-mapped}, {@code udp} or {@code dns} with a port on loopback, or {@code unix}
 * with a socket path. For each attempt it prints one line, {@code KIND sent: ...} or
 * {@code KIND failed: ...}, and never addresses anything but the loopback addresses and
 * the path it was given.
 */
public final class EgressAttempts {

	private EgressAttempts() {
	}

	public static void main(String[] args) {
		PrintStream out = System.out;
		String role = args[0];
		for (int i = 1; i < args.length; i++) {
			int separator = args[i].indexOf('=');
			String kind = args[i].substring(0, separator);
			String target = args[i].substring(separator + 1);
			String outcome;
			try {
				outcome = "sent: " + attempt(role, kind, target);
			}
			catch (Exception ex) {
				outcome = "failed: " + ex;
			}
			out.println(kind + " " + outcome);
		}
		out.flush();
	}

	private static String attempt(String role, String kind, String target) throws IOException {
		byte[] payload = payload(role, kind);
		InetAddress ipv4 = InetAddress.getByAddress(new byte[] { 127, 0, 0, 1 });
		InetAddress ipv6 = InetAddress.getByAddress(new byte[] { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 });
		switch (kind) {
			case "tcp4":
				return tcp(StandardProtocolFamily.INET, new InetSocketAddress(ipv4, Integer.parseInt(target)), payload);
			case "tcp6":
				return tcp(StandardProtocolFamily.INET6, new InetSocketAddress(ipv6, Integer.parseInt(target)),
						payload);
			case "tcp-mapped":
				// An IPv4 address on an AF_INET6 socket: the JDK connects to
				// ::ffff:127.0.0.1.
				return tcp(StandardProtocolFamily.INET6, new InetSocketAddress(ipv4, Integer.parseInt(target)),
						payload);
			case "udp":
				return udp(new InetSocketAddress(ipv4, Integer.parseInt(target)), payload);
			case "dns":
				return udp(new InetSocketAddress(ipv4, Integer.parseInt(target)), dnsQuery(role));
			case "unix":
				return unix(target, payload);
			default:
				throw new IllegalArgumentException("unknown attempt " + kind);
		}
	}

	static byte[] payload(String role, String kind) {
		return ("cave-sandbox verify " + role + " " + kind + "\n").getBytes(StandardCharsets.US_ASCII);
	}

	private static String tcp(ProtocolFamily family, InetSocketAddress address, byte[] payload) throws IOException {
		try (SocketChannel channel = SocketChannel.open(family)) {
			channel.connect(address);
			channel.write(ByteBuffer.wrap(payload));
			return "connected to " + channel.getRemoteAddress() + " and wrote " + payload.length + " bytes";
		}
	}

	private static String udp(InetSocketAddress address, byte[] payload) throws IOException {
		try (DatagramChannel channel = DatagramChannel.open(StandardProtocolFamily.INET)) {
			int sent = channel.send(ByteBuffer.wrap(payload), address);
			return "a datagram of " + sent + " bytes to " + address;
		}
	}

	private static String unix(String path, byte[] payload) throws IOException {
		try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
			channel.connect(UnixDomainSocketAddress.of(path));
			channel.write(ByteBuffer.wrap(payload));
			return "connected to " + path + " and wrote " + payload.length + " bytes";
		}
	}

	/**
	 * A DNS query (RFC 1035) for the A record of
	 * {@code ROLE.cave-sandbox-verify.invalid}: a reserved name, asked only of the
	 * listener of {@code verify}.
	 */
	static byte[] dnsQuery(String role) {
		ByteBuffer query = ByteBuffer.allocate(512);
		// Header: ID, flags (standard query, recursion desired), 1 question.
		query.putShort((short) 0x4356).putShort((short) 0x0100).putShort((short) 1);
		query.putShort((short) 0).putShort((short) 0).putShort((short) 0);
		for (String label : new String[] { role, "cave-sandbox-verify", "invalid" }) {
			byte[] bytes = label.getBytes(StandardCharsets.US_ASCII);
			query.put((byte) bytes.length).put(bytes);
		}
		// End of name, type A, class IN.
		query.put((byte) 0).putShort((short) 1).putShort((short) 1);
		byte[] bytes = new byte[query.position()];
		query.flip().get(bytes);
		return bytes;
	}

}
