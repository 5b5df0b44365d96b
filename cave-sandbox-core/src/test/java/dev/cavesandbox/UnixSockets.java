package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * Unix-domain socket listeners of the tests on this host, and the client that a command
 * runs to reach them: they show whether anything from a child arrived. Perl (Debian's
 * essential {@code perl-base}) serves where Java cannot: abstract addresses, and a client
 * inside the sandbox.
 */
final class UnixSockets {

	/**
	 * A Perl client program: connects to the unix socket given as the first argument (a
	 * path, or {@code @name} for an abstract one) and sends the second argument; exit 0
	 * only if it was sent.
	 */
	static final String CLIENT_PROGRAM = "use Socket; my ($a, $m) = @ARGV; $a =~ s/^\\@/\\0/; socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; "
			+ "connect($s, pack_sockaddr_un($a)) or die \"connect: $!\\n\"; print $s \"$m\\n\"; close($s) or die;";

	private UnixSockets() {
	}

	static List<String> client(String address, String message) {
		List<String> argv = new ArrayList<>(List.of("perl", "-e", CLIENT_PROGRAM));
		argv.add(address);
		argv.add(message);
		return argv;
	}

	/**
	 * A listener on a filesystem path.
	 */
	static final class PathListener implements AutoCloseable {

		private final Path path;

		private final ServerSocketChannel server;

		private final Selector selector;

		PathListener(Path path) throws IOException {
			this.path = path;
			this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
			this.server.bind(UnixDomainSocketAddress.of(path));
			this.server.configureBlocking(false);
			this.selector = Selector.open();
			this.server.register(this.selector, SelectionKey.OP_ACCEPT);
		}

		Path path() {
			return this.path;
		}

		/**
		 * Wait, with a generous limit, until a connection sent the expected message (for
		 * control runs that must reach the listener). Connections queue in the order they
		 * came, so anything an earlier command had sent is returned with it.
		 * @param expected the message
		 * @return every message received until then, in order
		 */
		List<String> awaitReceived(String expected) {
			List<String> arrived = new ArrayList<>();
			await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
				arrived.addAll(received(100));
				return arrived.contains(expected);
			});
			return List.copyOf(arrived);
		}

		/**
		 * Return the messages of the connections that arrived within the wait.
		 */
		List<String> received(int waitMillis) throws IOException {
			List<String> received = new ArrayList<>();
			long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
			long left;
			while ((left = deadline - System.nanoTime()) > 0) {
				if (this.selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))) == 0) {
					continue;
				}
				this.selector.selectedKeys().clear();
				SocketChannel channel;
				while ((channel = this.server.accept()) != null) {
					try (SocketChannel connection = channel) {
						connection.configureBlocking(true);
						ByteBuffer buffer = ByteBuffer.allocate(4096);
						StringBuilder message = new StringBuilder();
						while (connection.read(buffer) > 0) {
							buffer.flip();
							message.append(StandardCharsets.UTF_8.decode(buffer));
							buffer.clear();
						}
						received.add(message.toString());
					}
				}
			}
			return received;
		}

		@Override
		public void close() throws IOException {
			this.selector.close();
			this.server.close();
			Files.deleteIfExists(this.path);
		}

	}

	/**
	 * A listener on an abstract address (unix(7): the name starts with a NUL byte and
	 * lives in the network namespace, not in the filesystem), served by a Perl process
	 * that prints each message.
	 */
	static final class AbstractListener implements AutoCloseable {

		private final String name;

		private final Process process;

		private final List<String> received = new CopyOnWriteArrayList<>();

		AbstractListener(String name) throws IOException {
			this.name = name;
			this.process = new ProcessBuilder("perl", "-MSocket", "-e",
					"socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die; bind($s, pack_sockaddr_un(\"\\0\" . $ARGV[0])) "
							+ "or die \"bind: $!\\n\"; listen($s, 16) or die; $| = 1; print \"ready\\n\"; "
							+ "while (accept(my $c, $s)) { my $line = <$c>; print \"got:$line\"; close($c); }",
					name)
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8));
			String first = reader.readLine();
			if (!"ready".equals(first)) {
				this.process.destroyForcibly();
				throw new IOException("the abstract listener did not start: " + first);
			}
			Thread collector = new Thread(() -> {
				try {
					String line;
					while ((line = reader.readLine()) != null) {
						if (line.startsWith("got:")) {
							this.received.add(line.substring(4));
						}
					}
				}
				catch (IOException ex) {
					// the listener was closed
				}
			}, "abstract-listener-" + name);
			collector.setDaemon(true);
			collector.start();
		}

		/**
		 * Return the address for {@link UnixSockets#client(String, String)}.
		 */
		String address() {
			return "@" + this.name;
		}

		/**
		 * Wait, with a generous limit, until the expected message arrived. The listener
		 * serves one connection after the other in the order they came, so anything an
		 * earlier command had sent is returned with (before) it.
		 * @param expected the message
		 * @return every message received until then, in order
		 */
		List<String> awaitReceived(String expected) {
			await().atMost(Duration.ofSeconds(30)).until(() -> this.received.contains(expected));
			return List.copyOf(this.received);
		}

		@Override
		public void close() {
			this.process.destroyForcibly();
		}

	}

}
