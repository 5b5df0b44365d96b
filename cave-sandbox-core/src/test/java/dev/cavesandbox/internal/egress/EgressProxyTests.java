package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The egress proxy end to end, over its unix socket, in front of an HTTP server on
 * {@code 127.0.0.1}. Loopback only: names are resolved by a test resolver that knows
 * loopback answers only (or by the JVM's, for {@code localhost}); addresses that must be
 * refused are only ever returned by a resolver, and the tests show the proxy refuses them
 * before connecting anywhere.
 */
class EgressProxyTests {

	private static final InetAddress LOOPBACK = literal("127.0.0.1");

	@TempDir
	Path directory;

	private HttpServer server;

	private int port;

	private final List<Received> received = new CopyOnWriteArrayList<>();

	private final List<String> resolved = new CopyOnWriteArrayList<>();

	private final List<EgressProxy> proxies = new ArrayList<>();

	/** Knows names of the tests only, each with loopback or made-up answers. */
	private final HostResolver testResolver = (host) -> {
		this.resolved.add(host);
		return switch (host) {
			case "localhost", "service.test" -> List.of(LOOPBACK);
			case "metadata.test" -> List.of(literal("169.254.169.254"));
			case "intranet.test" -> List.of(literal("10.0.0.1"));
			// The loopback answer first: were it not refused, the connection would go
			// there.
			case "mixed.test" -> List.of(LOOPBACK, literal("1.1.1.1"));
			default -> throw new UnknownHostException(host);
		};
	};

	@BeforeEach
	void startServer() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(LOOPBACK, 0), 0);
		this.server.createContext("/", (exchange) -> {
			byte[] body = exchange.getRequestBody().readAllBytes();
			this.received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().toString(),
					exchange.getRequestHeaders(), body));
			byte[] response = ("hello from upstream " + exchange.getRequestURI()).getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(200, response.length);
			exchange.getResponseBody().write(response);
			exchange.close();
		});
		this.server.start();
		this.port = this.server.getAddress().getPort();
	}

	@AfterEach
	void stop() {
		this.proxies.forEach(EgressProxy::close);
		this.server.stop(0);
	}

	@Test
	void connectTunnelCarriesARequestToTheAllowedServer() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		try (SocketChannel client = connect(proxy)) {
			send(client, "CONNECT localhost:" + this.port + " HTTP/1.1\r\nHost: localhost:" + this.port + "\r\n\r\n");
			assertThat(read(client, true)).isEqualTo("HTTP/1.1 200 Connection established\r\n\r\n");
			send(client, "GET /through-the-tunnel HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
			assertThat(read(client, false)).startsWith("HTTP/1.1 200 ")
				.endsWith("hello from upstream /through-the-tunnel");
		}
		assertThat(this.received).singleElement().extracting(Received::uri).isEqualTo("/through-the-tunnel");
		assertThat(proxy.decisions())
			.containsExactly(new EgressDecision("localhost", this.port, true, "allowed", "127.0.0.1"));
		assertThat(this.resolved).containsExactly("localhost");
	}

	@Test
	void bytesSentRightAfterTheConnectHeadArriveUpstream() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		try (SocketChannel client = connect(proxy)) {
			send(client, "CONNECT localhost:" + this.port + " HTTP/1.1\r\n\r\n"
					+ "GET /early HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
			assertThat(read(client, false)).startsWith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 ")
				.endsWith("hello from upstream /early");
		}
		assertThat(this.received).singleElement().extracting(Received::uri).isEqualTo("/early");
	}

	@Test
	void tunnelPassesAHalfCloseOnInBothDirections() throws Exception {
		try (ServerSocket upstream = new ServerSocket(0, 1, LOOPBACK)) {
			// Answers only once the client's side has ended: the client's half-close must
			// arrive.
			CompletableFuture<Void> answered = CompletableFuture.runAsync(() -> {
				try (Socket socket = upstream.accept()) {
					String text = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
					socket.getOutputStream().write(("got: " + text).getBytes(StandardCharsets.US_ASCII));
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			});
			EgressProxy proxy = start(policy(true, "localhost:" + upstream.getLocalPort()));
			try (SocketChannel client = connect(proxy)) {
				send(client, "CONNECT localhost:" + upstream.getLocalPort() + " HTTP/1.1\r\n\r\n");
				assertThat(read(client, true)).startsWith("HTTP/1.1 200 ");
				send(client, "ping");
				client.shutdownOutput();
				assertThat(read(client, false)).isEqualTo("got: ping");
			}
			answered.get(10, TimeUnit.SECONDS);
		}
	}

	@Test
	void postThatExpectsContinueGetsTheUpstreamsInterimResponse() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		try (SocketChannel client = connect(proxy)) {
			send(client, "POST http://localhost:" + this.port + "/expect HTTP/1.1\r\nContent-Length: 5\r\n"
					+ "Expect: 100-continue\r\n\r\n");
			assertThat(read(client, true)).startsWith("HTTP/1.1 100 Continue");
			send(client, "later");
			assertThat(read(client, false)).startsWith("HTTP/1.1 200 ").endsWith("hello from upstream /expect");
		}
		assertThat(this.received).singleElement()
			.extracting((request) -> new String(request.body(), StandardCharsets.US_ASCII))
			.isEqualTo("later");
	}

	@Test
	void plainHttpIsForwardedInOriginFormWithConnectionCloseAndWithoutHopByHopHeaders() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		String response = exchange(proxy, "GET http://localhost:" + this.port + "/path?q=1#fragment HTTP/1.1\r\n"
				+ "Host: wrong.example\r\n" + "Proxy-Connection: keep-alive\r\n" + "Proxy-Authorization: Basic eDp5\r\n"
				+ "Connection: keep-alive, X-Hop, Content-Length\r\n" + "X-Hop: dropped\r\n"
				+ "Keep-Alive: timeout=5\r\n" + "TE: trailers\r\n" + "Upgrade: h2c\r\n" + "X-Kept: yes\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 200 ").endsWith("hello from upstream /path?q=1");
		Received request = this.received.get(0);
		assertThat(request.method()).isEqualTo("GET");
		assertThat(request.uri()).isEqualTo("/path?q=1");
		Map<String, List<String>> headers = request.headers();
		assertThat(request.headers().get("Connection")).containsExactly("close");
		assertThat(request.headers().get("Host")).containsExactly("localhost:" + this.port);
		assertThat(request.headers().get("X-Kept")).containsExactly("yes");
		assertThat(headers.keySet()).map(String::toLowerCase)
			.doesNotContain("proxy-connection", "proxy-authorization", "keep-alive", "te", "upgrade", "x-hop");
		assertThat(this.received).hasSize(1);
	}

	@Test
	void postWithContentLengthArrivesIntact() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		byte[] body = new byte[300_000];
		new Random(14).nextBytes(body);
		try (SocketChannel client = connect(proxy)) {
			send(client,
					("POST http://localhost:" + this.port + "/upload HTTP/1.1\r\nHost: localhost\r\n"
							+ "Content-Type: application/octet-stream\r\nContent-Length: " + body.length + "\r\n\r\n")
						.getBytes(StandardCharsets.US_ASCII));
			send(client, body);
			assertThat(read(client, false)).startsWith("HTTP/1.1 200 ").endsWith("hello from upstream /upload");
		}
		assertThat(this.received).singleElement().satisfies((request) -> {
			assertThat(request.method()).isEqualTo("POST");
			assertThat(request.body()).isEqualTo(body);
		});
	}

	@Test
	void postWithChunkedBodyArrivesIntact() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		String response = exchange(proxy,
				"POST http://localhost:" + this.port + "/chunks HTTP/1.1\r\nHost: localhost\r\n"
						+ "Transfer-Encoding: chunked\r\n\r\n" + "5\r\nhello\r\n" + "7\r\n, chunk\r\n"
						+ "19\r\ned world, through a proxy\r\n" + "0\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 200 ").endsWith("hello from upstream /chunks");
		assertThat(this.received).singleElement()
			.extracting((request) -> new String(request.body(), StandardCharsets.US_ASCII))
			.isEqualTo("hello, chunked world, through a proxy");
	}

	@Test
	void bodyWhoseChunksDoNotAddUpEndsTheConnection() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		String response = exchange(proxy, "POST http://localhost:" + this.port + "/chunks HTTP/1.1\r\n"
				+ "Transfer-Encoding: chunked\r\n\r\n" + "3\r\ntoo long\r\n" + "0\r\n\r\n");
		assertThat(response).isEmpty();
		assertThat(this.received).isEmpty();
	}

	@Test
	void bytesAfterTheEndOfAForwardedRequestDoNotReachTheUpstream() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		String response = exchange(proxy,
				"POST http://localhost:" + this.port + "/first HTTP/1.1\r\nContent-Length: 2\r\n\r\nok"
						+ "GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n");
		assertThat(response).endsWith("hello from upstream /first");
		assertThat(this.received).extracting(Received::uri).containsExactly("/first");
	}

	@Test
	void anotherPortIsRefusedAndTheServerSeesNothing() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		int otherPort = (this.port == 65535) ? this.port - 1 : this.port + 1;
		String response = exchange(proxy, "CONNECT localhost:" + otherPort + " HTTP/1.1\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 403 Forbidden\r\n")
			.endsWith("\r\n\r\ncave-sandbox egress: localhost:" + otherPort
					+ " is not in the allowed hosts (allowedHosts)\n");
		String plain = exchange(proxy, "GET http://localhost:" + otherPort + "/ HTTP/1.1\r\n\r\n");
		assertThat(plain).startsWith("HTTP/1.1 403 ");
		assertThat(proxy.decisions())
			.containsOnly(new EgressDecision("localhost", otherPort, false, "not_allowed", null))
			.hasSize(2);
		assertThat(this.received).isEmpty();
		assertThat(this.resolved).isEmpty();
	}

	@Test
	void anotherHostIsRefusedBeforeItsNameIsResolved() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		String response = exchange(proxy, "GET http://service.test:" + this.port + "/ HTTP/1.1\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 403 ")
			.contains("service.test:" + this.port + " is not in the allowed hosts (allowedHosts)");
		assertThat(proxy.decisions()).extracting(EgressDecision::reason).containsExactly("not_allowed");
		assertThat(this.resolved).isEmpty();
		assertThat(this.received).isEmpty();
	}

	@Test
	void localhostIsRefusedUnlessPrivateDestinationsAreAllowed() throws IOException {
		EgressProxy proxy = start(
				new EgressPolicy(EgressAllowList.of(List.of("localhost:" + this.port)), false, HostResolver.SYSTEM));
		String response = exchange(proxy, "CONNECT localhost:" + this.port + " HTTP/1.1\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 403 ")
			.contains("localhost:" + this.port + " resolves to ")
			.contains("loopback")
			.contains("refused unless private destinations are allowed (allowPrivateDestinations)");
		assertThat(proxy.decisions())
			.containsExactly(new EgressDecision("localhost", this.port, false, "private_destination", null));
		assertThat(this.received).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "metadata.test", "intranet.test", "mixed.test" })
	void nameThatResolvesToARefusedAddressIsRefusedBeforeAnyConnection(String host) throws IOException {
		EgressProxy proxy = start(policy(false, host + ":" + this.port));
		String response = exchange(proxy, "GET http://" + host + ":" + this.port + "/ HTTP/1.1\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 403 ").contains(" resolves to ");
		assertThat(proxy.decisions())
			.containsExactly(new EgressDecision(host, this.port, false, "private_destination", null));
		assertThat(this.received).isEmpty();
		assertThat(this.resolved).containsExactly(host);
	}

	@Test
	void ipLiteralOfAPrivateAddressIsRefusedWithoutResolving() throws IOException {
		EgressProxy proxy = start(policy(false, "169.254.169.254", "[fd00:ec2::254]"));
		assertThat(exchange(proxy, "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n"))
			.startsWith("HTTP/1.1 403 ")
			.contains("link-local");
		assertThat(exchange(proxy, "CONNECT [fd00:ec2::254]:443 HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 403 ")
			.contains("unique local");
		assertThat(proxy.decisions()).extracting(EgressDecision::reason)
			.containsExactly("private_destination", "private_destination");
		assertThat(this.resolved).isEmpty();
	}

	@Test
	void nameIsResolvedByThePolicysResolverOnce() throws IOException {
		EgressProxy proxy = start(policy(true, "service.test:" + this.port));
		String response = exchange(proxy, "GET http://Service.Test.:" + this.port + "/named HTTP/1.1\r\n\r\n");
		assertThat(response).startsWith("HTTP/1.1 200 ").endsWith("hello from upstream /named");
		assertThat(this.resolved).containsExactly("service.test");
		assertThat(this.received).singleElement()
			.satisfies((request) -> assertThat(request.headers().get("Host"))
				.containsExactly("Service.Test.:" + this.port));
		assertThat(proxy.decisions())
			.containsExactly(new EgressDecision("service.test", this.port, true, "allowed", "127.0.0.1"));
	}

	@Test
	void ipLiteralIsMatchedAsWrittenAndNeverResolved() throws IOException {
		EgressProxy proxy = start(policy(true, "127.0.0.1:" + this.port));
		assertThat(exchange(proxy, "GET http://127.0.0.1:" + this.port + "/literal HTTP/1.1\r\n\r\n"))
			.endsWith("hello from upstream /literal");
		assertThat(exchange(proxy, "GET http://localhost:" + this.port + "/named HTTP/1.1\r\n\r\n"))
			.startsWith("HTTP/1.1 403 ");
		assertThat(this.resolved).isEmpty();
		assertThat(this.received).extracting(Received::uri).containsExactly("/literal");
	}

	@Test
	void nameThatDoesNotResolveIsABadGateway() throws IOException {
		EgressProxy proxy = start(policy(true, "nowhere.test"));
		assertThat(exchange(proxy, "CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 502 ")
			.contains("nowhere.test does not resolve");
		assertThat(proxy.decisions())
			.containsExactly(new EgressDecision("nowhere.test", 443, false, "unresolved", null));
	}

	@Test
	void destinationThatRefusesTheConnectionIsABadGateway() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, LOOPBACK)) {
			closedPort = socket.getLocalPort();
		}
		EgressProxy proxy = start(policy(true, "localhost:" + closedPort));
		assertThat(exchange(proxy, "CONNECT localhost:" + closedPort + " HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 502 ")
			.contains("could not connect to localhost:" + closedPort + " at 127.0.0.1");
		assertThat(proxy.decisions())
			.containsExactly(new EgressDecision("localhost", closedPort, false, "connect_failed", null));
	}

	@ParameterizedTest
	@ValueSource(strings = { "hello there\r\n\r\n", "\u0001\u0002\u0003\r\n\r\n", "GET /index.html HTTP/1.1\r\n\r\n",
			"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "GET https://localhost/ HTTP/1.1\r\n\r\n",
			"GET http:///nohost HTTP/1.1\r\n\r\n", "CONNECT localhost HTTP/1.1\r\n\r\n",
			"CONNECT localhost:99999 HTTP/1.1\r\n\r\n", "CONNECT ::1:443 HTTP/1.1\r\n\r\n",
			"GET http://user@localhost/ HTTP/1.1\r\n\r\n", "GET http://local host/ HTTP/1.1\r\n\r\n",
			"GET http://localhost/ HTTP/1.1\r\nBad Header\r\n\r\n" })
	void malformedOrUnsupportedRequestIsABadRequest(String request) throws IOException {
		EgressProxy proxy = start(policy(true, "localhost", "localhost:443"));
		assertThat(exchange(proxy, request)).startsWith("HTTP/1.1 400 Bad Request\r\n")
			.contains("cave-sandbox egress: bad request: ");
		assertThat(proxy.decisions()).singleElement()
			.satisfies((decision) -> assertThat(decision.reason()).isEqualTo("bad_request"));
		assertThat(this.received).isEmpty();
		assertThat(this.resolved).isEmpty();
	}

	@Test
	void oversizedHeadIsRefusedWith431() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		String head = "GET http://localhost:" + this.port + "/ HTTP/1.1\r\nX-Big: " + "a".repeat(17 * 1024)
				+ "\r\n\r\n";
		assertThat(exchange(proxy, head)).startsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n");
		assertThat(proxy.decisions()).containsExactly(new EgressDecision("", 0, false, "bad_request", null));
		assertThat(this.received).isEmpty();
	}

	@Test
	void listenerIsToldEveryDecisionInOrder() throws IOException {
		List<EgressDecision> told = new CopyOnWriteArrayList<>();
		EgressProxy proxy = start(policy(true, "localhost:" + this.port), told::add);
		exchange(proxy, "GET http://localhost:" + this.port + "/one HTTP/1.1\r\n\r\n");
		exchange(proxy, "GET http://example.org/ HTTP/1.1\r\n\r\n");
		exchange(proxy, "garbage\r\n\r\n");
		assertThat(told).containsExactlyElementsOf(proxy.decisions())
			.extracting(EgressDecision::reason)
			.containsExactly("allowed", "not_allowed", "bad_request");
	}

	@Test
	void throwingListenerDoesNotBreakTheProxy() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port), (decision) -> {
			throw new IllegalStateException("a failing listener");
		});
		assertThat(exchange(proxy, "GET http://localhost:" + this.port + "/one HTTP/1.1\r\n\r\n"))
			.endsWith("hello from upstream /one");
		assertThat(exchange(proxy, "GET http://localhost:" + this.port + "/two HTTP/1.1\r\n\r\n"))
			.endsWith("hello from upstream /two");
		assertThat(proxy.decisions()).extracting(EgressDecision::reason).containsExactly("allowed", "allowed");
	}

	@Test
	void connectionsBeyondTheLimitAreRefusedWith503() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		List<SocketChannel> idle = new ArrayList<>();
		try {
			for (int i = 0; i < EgressProxy.MAX_CONNECTIONS; i++) {
				idle.add(connect(proxy));
			}
			try (SocketChannel client = connect(proxy)) {
				assertThat(read(client, false)).startsWith("HTTP/1.1 503 Service Unavailable\r\n")
					.contains("too many open connections");
			}
		}
		finally {
			idle.forEach(EgressProxy::closeQuietly);
		}
		assertThat(proxy.decisions()).isEmpty();
	}

	@Test
	void closeEndsOpenTunnelsThreadsAndTheSocket() throws IOException {
		EgressProxy proxy = start(policy(true, "localhost:" + this.port));
		try (SocketChannel tunnel = connect(proxy); SocketChannel idle = connect(proxy)) {
			send(tunnel, "CONNECT localhost:" + this.port + " HTTP/1.1\r\n\r\n");
			assertThat(read(tunnel, true)).startsWith("HTTP/1.1 200 ");
			assertThat(proxyThreads()).isNotEmpty();
			proxy.close();
			assertThat(read(tunnel, false)).isEmpty();
			assertThat(read(idle, false)).isEmpty();
		}
		assertThat(proxyThreads()).isEmpty();
		assertThat(proxy.socketPath()).doesNotExist();
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> connect(proxy));
		proxy.close();
	}

	@Test
	void socketIsReadableAndWritableByEveryUser() throws IOException {
		EgressProxy proxy = start(policy(false, "localhost"));
		assertThat(proxy.socketPath()).isEqualTo(this.directory.resolve("egress.sock"));
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(proxy.socketPath())))
			.isEqualTo("rw-rw-rw-");
	}

	/**
	 * A path longer than a unix socket's 107 bytes is bound through a descriptor of its
	 * directory; a client that reaches the directory by a shorter path (here its working
	 * directory's relative name, as the bridge does after fchdir) gets the proxy.
	 */
	@Test
	void socketWhosePathIsLongerThanAUnixSocketsIsBoundInItsDirectory() throws Exception {
		Path deep = Files.createDirectories(this.directory.resolve("d".repeat(60)).resolve("e".repeat(60)));
		Path socket = deep.resolve("egress.sock");
		assertThat(socket.toString().length()).isGreaterThan(ProxySocket.MAX_SOCKET_PATH);
		EgressProxy proxy = EgressProxy.start(socket, policy(true, "localhost:" + this.port), EgressListener.NONE);
		this.proxies.add(proxy);
		assertThat(proxy.socketPath()).isEqualTo(socket);
		assertThat(Files
			.readAttributes(socket, java.nio.file.attribute.BasicFileAttributes.class,
					java.nio.file.LinkOption.NOFOLLOW_LINKS)
			.isOther()).as("a socket").isTrue();
		Process client = new ProcessBuilder("python3", "-c",
				"import socket; s = socket.socket(socket.AF_UNIX); s.connect('egress.sock'); "
						+ "s.sendall(b'GET http://localhost:" + this.port
						+ "/deep HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'); " + "print(s.recv(100).decode().splitlines()[0])")
			.directory(deep.toFile())
			.redirectErrorStream(true)
			.start();
		assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
			.isEqualTo("HTTP/1.1 200 OK\n");
		assertThat(this.received).extracting(Received::uri).containsExactly("/deep");
	}

	@Test
	void socketPathMustNotExist() throws IOException {
		Path taken = Files.createFile(this.directory.resolve("taken.sock"));
		assertThatExceptionOfType(FileAlreadyExistsException.class)
			.isThrownBy(() -> EgressProxy.start(taken, policy(false, "localhost"), EgressListener.NONE));
		assertThat(taken).exists();
	}

	private EgressPolicy policy(boolean allowPrivateDestinations, String... entries) {
		return new EgressPolicy(EgressAllowList.of(List.of(entries)), allowPrivateDestinations, this.testResolver);
	}

	private EgressProxy start(EgressPolicy policy) throws IOException {
		return start(policy, EgressListener.NONE);
	}

	private EgressProxy start(EgressPolicy policy, EgressListener listener) throws IOException {
		EgressProxy proxy = EgressProxy.start(this.directory.resolve("egress.sock"), policy, listener,
				EgressProxyTests::loopbackOnly);
		this.proxies.add(proxy);
		return proxy;
	}

	/**
	 * Connect only to loopback: the test resolver answers other addresses too (to be
	 * refused), and a check that a change broke must not send anything there.
	 */
	private static void loopbackOnly(SocketChannel channel, InetSocketAddress address, int timeoutMillis)
			throws IOException {
		if (!address.getAddress().isLoopbackAddress()) {
			throw new AssertionError("the proxy would have connected to " + address + ", which is not loopback");
		}
		EgressProxy.Connector.DIRECT.connect(channel, address, timeoutMillis);
	}

	private static List<Thread> proxyThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("cave-sandbox-egress-") && thread.isAlive())
			.toList();
	}

	private static SocketChannel connect(EgressProxy proxy) throws IOException {
		return SocketChannel.open(UnixDomainSocketAddress.of(proxy.socketPath()));
	}

	/** Send a request on a new connection and read the whole response. */
	private static String exchange(EgressProxy proxy, String request) throws IOException {
		try (SocketChannel client = connect(proxy)) {
			send(client, request);
			return read(client, false);
		}
	}

	private static void send(SocketChannel client, String text) throws IOException {
		send(client, text.getBytes(StandardCharsets.ISO_8859_1));
	}

	private static void send(SocketChannel client, byte[] bytes) throws IOException {
		ByteBuffer buffer = ByteBuffer.wrap(bytes);
		while (buffer.hasRemaining()) {
			client.write(buffer);
		}
	}

	/**
	 * Read until the end of a response head, or until the end of the stream, within ten
	 * seconds.
	 */
	private static String read(SocketChannel client, boolean headOnly) throws IOException {
		StringBuilder text = new StringBuilder();
		ByteBuffer buffer = ByteBuffer.allocate(1);
		long deadline = System.nanoTime() + 10_000_000_000L;
		client.configureBlocking(false);
		try (Selector selector = Selector.open()) {
			client.register(selector, SelectionKey.OP_READ);
			while (!(headOnly && text.indexOf("\r\n\r\n") >= 0)) {
				long left = (deadline - System.nanoTime()) / 1_000_000;
				assertThat(left).as("time left to read, having read: %s", text).isPositive();
				selector.select(left);
				selector.selectedKeys().clear();
				int read;
				while ((read = client.read(buffer.clear())) > 0) {
					text.append((char) (buffer.get(0) & 0xff));
					if (headOnly && text.indexOf("\r\n\r\n") >= 0) {
						break;
					}
				}
				if (read < 0) {
					break;
				}
			}
		}
		client.configureBlocking(true);
		return text.toString();
	}

	private static InetAddress literal(String address) {
		try {
			return InetAddress.getByName(address);
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private record Received(String method, String uri, Headers headers, byte[] body) {
	}

}
