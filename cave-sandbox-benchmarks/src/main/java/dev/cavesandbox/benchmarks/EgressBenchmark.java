package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import dev.cavesandbox.internal.egress.EgressProxy;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What a request through the egress proxy costs beside a direct one, on loopback only (a
 * JDK {@link HttpServer} on {@code 127.0.0.1}, a fresh connection per request, as the
 * proxy serves one request per connection). In each round, in an order shuffled anew:
 * <ul>
 * <li>{@code jvm-direct}: a request over TCP straight to the server;</li>
 * <li>{@code jvm-forward}: the same request in absolute form to an {@link EgressProxy} on
 * its unix socket (plain-HTTP forwarding);</li>
 * <li>{@code jvm-connect}: a {@code CONNECT} tunnel through the proxy, then the
 * request;</li>
 * <li>{@code python-host} and {@code python-sandbox}: python's urllib,
 * {@value #PYTHON_REQUESTS} requests timed inside the process (its start is not counted),
 * run unisolated on the host (direct) and in a bwrap sandbox with the allow-list (the
 * bridge, then the proxy).</li>
 * </ul>
 * The medians go to JMH as auxiliary counters (µs per request), with the median of each
 * round's ratio to its direct counterpart.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class EgressBenchmark {

	static final int PYTHON_REQUESTS = 20;

	private static final String PYTHON = "import statistics, sys, time, urllib.request\n"
			+ "opener = urllib.request.build_opener()\ntimes = []\nfor _ in range(int(sys.argv[2])):\n"
			+ "    start = time.perf_counter()\n    opener.open(sys.argv[1]).read()\n"
			+ "    times.append(time.perf_counter() - start)\nprint(int(statistics.median(times) * 1e9))\n";

	@Param("30")
	public int rounds;

	private HttpServer server;

	private EgressProxy proxy;

	private Path directory;

	private IsolatedExecutor sandbox;

	private IsolatedExecutor host;

	private final Random random = new Random(14);

	@Setup
	public void setUp() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		byte[] body = "ok\n".getBytes(StandardCharsets.US_ASCII);
		this.server.createContext("/", (exchange) -> {
			exchange.getRequestBody().readAllBytes();
			exchange.sendResponseHeaders(200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		this.server.start();
		this.directory = Files.createTempDirectory("cave-sandbox-egress-benchmark-");
		EgressAllowList list = EgressAllowList.of(List.of(authority()));
		this.proxy = EgressProxy.start(this.directory.resolve("egress.sock"),
				new EgressPolicy(list, true, HostResolver.SYSTEM), EgressListener.NONE);
		BenchmarkMechanism bwrap = BenchmarkMechanism.resolve("bwrap");
		this.sandbox = bwrap.executor(SandboxSettings.builder()
			.mechanism(MechanismChoice.BWRAP)
			.allowedHosts(List.of(authority()))
			.allowPrivateDestinations(true)
			.warm(WarmPoolSettings.OFF)
			.build());
		BenchmarkMechanism none = BenchmarkMechanism.resolve("none");
		this.host = none.executor(none.settings());
	}

	private String authority() {
		return "localhost:" + this.server.getAddress().getPort();
	}

	@Benchmark
	public double egress(Medians medians) throws Exception {
		List<String> variants = new ArrayList<>(
				List.of("jvm-direct", "jvm-forward", "jvm-connect", "python-host", "python-sandbox"));
		Map<String, long[]> times = new LinkedHashMap<>();
		variants.forEach((variant) -> times.put(variant, new long[this.rounds]));
		for (int i = 0; i < this.rounds; i++) {
			Collections.shuffle(variants, this.random);
			for (String variant : variants) {
				times.get(variant)[i] = switch (variant) {
					case "jvm-direct" -> timed(this::direct);
					case "jvm-forward" -> timed(this::forward);
					case "jvm-connect" -> timed(this::connect);
					case "python-host" -> python(this.host);
					default -> python(this.sandbox);
				};
			}
		}
		medians.jvmDirectUs = Rounds.median(times.get("jvm-direct")) / 1000.0;
		medians.jvmForwardUs = Rounds.median(times.get("jvm-forward")) / 1000.0;
		medians.jvmConnectUs = Rounds.median(times.get("jvm-connect")) / 1000.0;
		medians.pythonHostUs = Rounds.median(times.get("python-host")) / 1000.0;
		medians.pythonSandboxUs = Rounds.median(times.get("python-sandbox")) / 1000.0;
		medians.forwardOverDirect = Rounds.medianRatio(times.get("jvm-forward"), times.get("jvm-direct"));
		medians.connectOverDirect = Rounds.medianRatio(times.get("jvm-connect"), times.get("jvm-direct"));
		medians.sandboxOverHost = Rounds.medianRatio(times.get("python-sandbox"), times.get("python-host"));
		return medians.forwardOverDirect;
	}

	private interface Request {

		void run() throws IOException;

	}

	private static long timed(Request request) throws IOException {
		long start = System.nanoTime();
		request.run();
		return System.nanoTime() - start;
	}

	private void direct() throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.server.getAddress().getPort())) {
			exchange(socket.getInputStream(), socket.getOutputStream(),
					"GET / HTTP/1.1\r\nHost: " + authority() + "\r\nConnection: close\r\n\r\n");
		}
	}

	private void forward() throws IOException {
		try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
			channel.connect(UnixDomainSocketAddress.of(this.proxy.socketPath()));
			exchange(Channels.newInputStream(channel), Channels.newOutputStream(channel), "GET http://" + authority()
					+ "/ HTTP/1.1\r\nHost: " + authority() + "\r\nConnection: close\r\n\r\n");
		}
	}

	private void connect() throws IOException {
		try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
			channel.connect(UnixDomainSocketAddress.of(this.proxy.socketPath()));
			channel.write(ByteBuffer.wrap(("CONNECT " + authority() + " HTTP/1.1\r\nHost: " + authority() + "\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII)));
			InputStream in = Channels.newInputStream(channel);
			readHead(in);
			exchange(in, Channels.newOutputStream(channel),
					"GET / HTTP/1.1\r\nHost: " + authority() + "\r\nConnection: close\r\n\r\n");
		}
	}

	private static void readHead(InputStream in) throws IOException {
		int matched = 0;
		while (matched < 4) {
			int next = in.read();
			if (next < 0) {
				throw new IOException("the proxy closed the tunnel before its answer ended");
			}
			matched = (next == "\r\n\r\n".charAt(matched)) ? matched + 1 : ((next == '\r') ? 1 : 0);
		}
	}

	private static void exchange(InputStream in, OutputStream out, String request) throws IOException {
		out.write(request.getBytes(StandardCharsets.US_ASCII));
		out.flush();
		String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
		if (!answer.startsWith("HTTP/1.1 200") || !answer.endsWith("ok\n")) {
			throw new IOException("unexpected answer: " + answer);
		}
	}

	private long python(IsolatedExecutor executor) {
		ExecutionResult result = executor.execute(ExecutionRequest
			.builder("python3", "-c", PYTHON, "http://" + authority() + "/", String.valueOf(PYTHON_REQUESTS))
			.build());
		if (!result.succeeded()) {
			throw new IllegalStateException(result + ": " + result.stderrText());
		}
		return Long.parseLong(result.stdoutText().strip());
	}

	@TearDown
	public void tearDown() throws IOException {
		this.sandbox.close();
		this.host.close();
		this.proxy.close();
		this.server.stop(0);
		Files.deleteIfExists(this.directory);
	}

	/** The medians of one measurement iteration, in µs per request, and the ratios. */
	@State(Scope.Thread)
	@AuxCounters(AuxCounters.Type.EVENTS)
	public static class Medians {

		public double jvmDirectUs;

		public double jvmForwardUs;

		public double jvmConnectUs;

		public double pythonHostUs;

		public double pythonSandboxUs;

		/** The median of each round's forwarded request over its direct one. */
		public double forwardOverDirect;

		/** The median of each round's tunnelled request over its direct one. */
		public double connectOverDirect;

		/** The median of each round's sandboxed python request over its direct one. */
		public double sandboxOverHost;

	}

}
