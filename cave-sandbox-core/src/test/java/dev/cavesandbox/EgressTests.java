package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import com.sun.net.httpserver.HttpServer;
import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The egress allow-list through the executor, on the real kernel, on each mechanism with
 * a network namespace of its own (this JVM's commands run as its command user when it is
 * root). Loopback only: the only server is this test's on {@code 127.0.0.1}, reached by
 * the name {@code localhost} or by a name that only the proxy's resolver knows; nothing
 * is ever sent to any other address.
 */
@EnabledOnOs(OS.LINUX)
class EgressTests {

	/**
	 * A name of the reserved {@code .test} domain (RFC 6761) that only the proxy knows.
	 */
	private static final String SERVICE = "service.test";

	private HttpServer server;

	private final List<String> received = Collections.synchronizedList(new ArrayList<>());

	@BeforeEach
	void startServer() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.createContext("/", (exchange) -> {
			try (InputStream body = exchange.getRequestBody()) {
				String text = new String(body.readAllBytes(), StandardCharsets.UTF_8);
				this.received.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " " + text);
			}
			byte[] answer = ("served " + exchange.getRequestURI().getPath() + "\n").getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(200, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		});
		this.server.start();
	}

	@AfterEach
	void stopServer() {
		this.server.stop(0);
	}

	static Stream<MechanismChoice> mechanismsWithANetworkNamespace() {
		return Stream.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE, MechanismChoice.NAMESPACES);
	}

	private int port() {
		return this.server.getAddress().getPort();
	}

	/**
	 * curl (plain HTTP and, with {@code -p}, a CONNECT tunnel), python's urllib and a
	 * child JVM's {@code HttpClient} reach the allowed {@code localhost:PORT} through the
	 * proxy that the environment names; each connection is one allowed decision.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void curlPythonAndAChildJvmReachAnAllowedHost(MechanismChoice mechanism, @TempDir Path work) throws Exception {
		Files.writeString(work.resolve("Fetch.java"),
				"""
						import java.net.URI;
						import java.net.http.HttpClient;
						import java.net.http.HttpRequest;
						import java.net.http.HttpResponse;
						class Fetch {
							public static void main(String[] args) throws Exception {
								HttpResponse<String> response = HttpClient.newHttpClient().send(
										HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.ofString());
								System.out.print("java " + response.statusCode() + " " + response.body());
							}
						}
						""");
		String url = "http://localhost:" + port();
		String script = "curl -sS " + url + "/curl\n" + "curl -sS -p " + url + "/tunnel\n"
				+ "python3 -c 'import urllib.request,sys; print(\"python\", urllib.request.urlopen(sys.argv[1]).read()"
				+ ".decode().strip())' " + url + "/python\n" + javaCommand() + " Fetch.java " + url + "/java\n";
		try (ProcessIsolatedExecutor executor = allowing(mechanism, List.of("localhost:" + port()), true)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder("sh", "-c", script)
				.workingDirectory(work)
				.timeout(java.time.Duration.ofSeconds(60))
				.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).contains("served /curl", "served /tunnel", "python served /python",
					"java 200 served /java");
			assertThat(this.received).containsExactlyInAnyOrder("GET /curl ", "GET /tunnel ", "GET /python ",
					"GET /java ");
			assertThat(result.egressDecisions()).hasSize(4)
				.allSatisfy((decision) -> assertThat(decision)
					.extracting(EgressDecision::host, EgressDecision::port, EgressDecision::allowed)
					.containsExactly("localhost", port(), true));
		}
	}

	/**
	 * Another port of the allowed host and another host are refused with 403 before any
	 * connection; the server sees only the test's own control request, sent after the
	 * command ended.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void otherPortsAndHostsAreRefusedAndTheServerSeesNothing(MechanismChoice mechanism) throws Exception {
		String script = "curl -s -o /dev/null -w 'port %{http_code}\\n' http://localhost:" + port() + "/port\n"
				+ "curl -s -o /dev/null -w 'host %{http_code}\\n' http://example.test:" + port() + "/host\n"
				+ "curl -s -p -o /dev/null -w 'tunnel %{http_code}\\n' http://localhost:" + port() + "/tunnel\n";
		try (ProcessIsolatedExecutor executor = allowing(mechanism, List.of("localhost:" + (port() + 1)), true)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder("sh", "-c", script).build());
			assertThat(result.stdoutText()).as(result.stderrText())
				.contains("port 403", "host 403")
				.containsPattern("tunnel (403|000)");
			assertThat(result.egressDecisions()).extracting(EgressDecision::reason)
				.containsExactly("not_allowed", "not_allowed", "not_allowed");
		}
		assertThat(control()).isEqualTo(List.of("GET /control "));
	}

	/**
	 * Without {@code allow-private-destinations}, an allowed name that resolves to
	 * loopback is refused (SSRF), and nothing arrives.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void anAllowedNameOfALoopbackAddressIsRefusedWithoutPrivateDestinations(MechanismChoice mechanism)
			throws Exception {
		try (ProcessIsolatedExecutor executor = allowing(mechanism, List.of("localhost:" + port()), false)) {
			ExecutionResult result = executor.execute(ExecutionRequest
				.builder("curl", "-s", "-w", "\\n%{http_code}\\n", "http://localhost:" + port() + "/ssrf")
				.build());
			assertThat(result.stdoutText()).as(result.stderrText()).contains("\n403\n");
			assertThat(result.egressDecisions()).singleElement()
				.satisfies((decision) -> assertThat(decision.reason()).isEqualTo("private_destination"));
		}
		assertThat(control()).isEqualTo(List.of("GET /control "));
	}

	/**
	 * A direct connection to the server's port, bypassing the proxy, finds only the
	 * sandbox's own loopback: refused, and nothing arrives; the proxy was not asked.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void aDirectConnectionStillFails(MechanismChoice mechanism) throws Exception {
		String script = "import socket\ntry:\n socket.create_connection(('127.0.0.1', " + port()
				+ "), 5).sendall(b'GET /direct HTTP/1.0\\r\\n\\r\\n')\n print('connected')\n"
				+ "except OSError as e:\n print('refused', e)\n";
		try (ProcessIsolatedExecutor executor = allowing(mechanism, List.of("localhost:" + port()), true)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder("python3", "-c", script).build());
			assertThat(result.stdoutText()).as(result.stderrText()).startsWith("refused").doesNotContain("connected");
			assertThat(result.egressDecisions()).isEmpty();
		}
		assertThat(control()).isEqualTo(List.of("GET /control "));
	}

	/**
	 * The command sends the name; the proxy resolves it: a name that no resolver of the
	 * host or the sandbox knows, mapped to the server only by the proxy's resolver, is
	 * reached.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void theProxyResolvesNamesNotTheSandbox(MechanismChoice mechanism) throws Exception {
		try (ProcessIsolatedExecutor executor = allowing(mechanism, List.of(SERVICE + ":" + port()), true)) {
			executor.resolveHostsWith((host) -> {
				assertThat(host).isEqualTo(SERVICE);
				return List.of(InetAddress.getByAddress(SERVICE, new byte[] { 127, 0, 0, 1 }));
			});
			ExecutionResult result = executor.execute(
					ExecutionRequest.builder("curl", "-sS", "http://" + SERVICE + ":" + port() + "/named").build());
			assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("served /named\n");
			assertThat(result.egressDecisions()).singleElement().satisfies((decision) -> {
				assertThat(decision.host()).isEqualTo(SERVICE);
				assertThat(decision.address()).isEqualTo("127.0.0.1");
				assertThat(decision.allowed()).isTrue();
			});
		}
	}

	/**
	 * A request's own allow-list replaces the settings', and an empty one means no egress
	 * at all: no proxy, no variables.
	 */
	@Test
	void aRequestsAllowListReplacesTheSettings() throws Exception {
		try (ProcessIsolatedExecutor executor = allowing(MechanismChoice.BWRAP, List.of("localhost:" + port()), true)) {
			ExecutionResult none = executor
				.execute(ExecutionRequest.builder("sh", "-c", "echo \"[$HTTP_PROXY]\"").allowedHosts().build());
			assertThat(none.stdoutText()).isEqualTo("[]\n");
			ExecutionResult other = executor.execute(ExecutionRequest
				.builder("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://localhost:" + port() + "/")
				.allowedHosts("localhost:" + (port() + 1))
				.build());
			assertThat(other.stdoutText()).isEqualTo("403");
		}
		assertThat(control()).isEqualTo(List.of("GET /control "));
	}

	/**
	 * The command's environment names the bridge, and {@code JAVA_TOOL_OPTIONS} keeps the
	 * request's own options before the proxy's.
	 */
	@Test
	void theEnvironmentNamesTheBridge() throws Exception {
		try (ProcessIsolatedExecutor executor = allowing(MechanismChoice.BWRAP, List.of("localhost:" + port()), true)) {
			ExecutionResult result = executor.execute(ExecutionRequest
				.builder("sh", "-c",
						"echo $HTTP_PROXY $https_proxy $ALL_PROXY \"[$NO_PROXY]\"; echo $JAVA_TOOL_OPTIONS")
				.environment("JAVA_TOOL_OPTIONS", "-Xmx64m")
				.build());
			assertThat(result.stdoutText()).isEqualTo(
					"http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 []\n-Xmx64m -Dhttp.proxyHost=127.0.0.1 "
							+ "-Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=\n");
		}
	}

	/**
	 * With a private loopback asked for, the command's own servers stay local: local
	 * names bypass the proxy ({@code NO_PROXY}, and the JDK's default non-proxy hosts),
	 * and a server the command starts on {@code 127.0.0.1} answers it directly, without
	 * any decision of the proxy.
	 */
	@Test
	void aPrivateLoopbackKeepsLocalNamesLocal(@TempDir Path work) throws Exception {
		Files.writeString(work.resolve("inside.txt"), "inside the sandbox\n");
		try (ProcessIsolatedExecutor executor = allowing(MechanismChoice.BWRAP, List.of("localhost:" + port()), true)) {
			ExecutionResult result = executor.execute(ExecutionRequest
				.builder("sh", "-c", "echo \"[$NO_PROXY] [$no_proxy]\"; echo $JAVA_TOOL_OPTIONS; "
						+ "python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 & "
						+ "for i in $(seq 50); do curl -s http://localhost:8000/inside.txt && break; sleep 0.1; done")
				.workingDirectory(work)
				.loopback(true)
				.build());
			assertThat(result.stdoutText()).as(result.stderrText())
				.isEqualTo("[localhost,127.0.0.1,::1] [localhost,127.0.0.1,::1]\n-Dhttp.proxyHost=127.0.0.1 "
						+ "-Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128\ninside the sandbox\n");
			assertThat(result.egressDecisions()).isEmpty();
		}
	}

	/** A {@code NO_PROXY} of the request's own is kept, in both spellings. */
	@Test
	void theRequestsOwnNoProxyIsKept() throws Exception {
		try (ProcessIsolatedExecutor executor = allowing(MechanismChoice.BWRAP, List.of("localhost:" + port()), true)) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder("sh", "-c", "echo \"[$NO_PROXY] [$no_proxy] $HTTP_PROXY\"")
					.environment("NO_PROXY", "internal.test")
					.environment("HTTP_PROXY", "http://elsewhere.test:8080")
					.build());
			assertThat(result.stdoutText()).isEqualTo("[internal.test] [internal.test] http://127.0.0.1:3128\n");
		}
	}

	/**
	 * Executions one after another each get an empty working directory of their own,
	 * which is never also an egress directory (a directory given back twice would be
	 * handed out twice).
	 */
	@Test
	void consecutiveExecutionsEachGetAnEmptyWorkingDirectory() throws Exception {
		try (ProcessIsolatedExecutor executor = allowing(MechanismChoice.BWRAP, List.of("localhost:" + port()), true)) {
			for (int i = 0; i < 6; i++) {
				ExecutionResult result = executor.execute(
						ExecutionRequest.builder("sh", "-c", "pwd; ls -A; curl -s http://localhost:" + port() + "/")
							.build());
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				List<String> lines = result.stdoutText().lines().toList();
				assertThat(lines).as("pwd, an empty listing, the server's answer").hasSize(2).endsWith("served /");
			}
		}
	}

	/**
	 * The seccomp mechanism has no network namespace: an execution with allowed hosts
	 * fails with its code before anything runs, and leaves no egress directory behind.
	 */
	@Test
	void theSeccompMechanismRefusesAnAllowList(@TempDir Path workDirectory, @TempDir Path work) throws Exception {
		Path marker = work.resolve("ran");
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(MechanismChoice.SECCOMP,
				(builder) -> builder.workDirectory(workDirectory).allowedHosts(List.of("localhost:" + port())))) {
			assertThatExceptionOfType(EgressUnavailableException.class)
				.isThrownBy(() -> executor
					.execute(ExecutionRequest.builder("touch", marker.toString()).workingDirectory(work).build()))
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_egress_unavailable"))
				.withMessageContaining("seccomp")
				.withMessageContaining("no network namespace");
		}
		assertThat(marker).doesNotExist();
		try (Stream<Path> left = Files.walk(workDirectory)) {
			assertThat(left.map((path) -> path.getFileName().toString())).doesNotContain("egress.sock");
		}
	}

	/**
	 * After the execution, whatever it left running, the proxy's threads and its
	 * directory are gone.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void nothingOfTheProxyOutlivesTheExecution(MechanismChoice mechanism, @TempDir Path workDirectory)
			throws Exception {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(builder) -> builder.workDirectory(workDirectory)
					.allowedHosts(List.of("localhost:" + port()))
					.allowPrivateDestinations(true))) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder("sh", "-c", "curl -sS -p http://localhost:" + port() + "/a; "
						+ "(exec 3<>/dev/null; python3 -c 'import socket,time; s=socket.create_connection((\"127.0.0.1\", 3128)); "
						+ "s.sendall(b\"CONNECT localhost:" + port()
						+ " HTTP/1.1\\r\\n\\r\\n\"); time.sleep(60)' &) ; sleep 1")
					.build());
			assertThat(result.stdoutText()).as(result.stderrText()).contains("served /a");
		}
		assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
			.noneMatch((name) -> name.startsWith("cave-sandbox-egress"));
		try (Stream<Path> left = Files.walk(workDirectory)) {
			assertThat(left.map((path) -> path.getFileName().toString())).doesNotContain("egress.sock");
		}
	}

	static Stream<Arguments> unprivilegedJvms() {
		return Stream.of(Arguments.of(Profile.UNCONFINED, MechanismChoice.BWRAP),
				Arguments.of(Profile.UNCONFINED, MechanismChoice.UNSHARE),
				Arguments.of(Profile.MOUNTS_REFUSED, MechanismChoice.NAMESPACES));
	}

	/**
	 * A JVM of an unprivileged user (nobody; on namespaces in a container that refuses
	 * mounts) serves its own proxy, whose socket its sandbox reaches: the allowed port is
	 * reached, another is refused.
	 */
	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("unprivilegedJvms")
	void anUnprivilegedJvmGivesItsCommandsTheAllowList(Profile profile, MechanismChoice mechanism,
			@TempDir Path directory) throws Exception {
		ContainerConfinement.assumeAvailable();
		try (ContainerJvm jvm = ContainerJvm.start(directory, profile, User.NOBODY, mechanism)) {
			assertThat(jvm.verdict().available()).as("%s; log: %s", jvm.verdict(), jvm.log()).isTrue();
			ContainerJvm.Result result = jvm.withEgress("localhost:" + port(), "sh", "-c",
					"id -u; curl -sS http://localhost:" + port() + "/nobody; curl -s -o /dev/null -w '%{http_code}' "
							+ "http://localhost:" + (port() + 1) + "/");
			assertThat(result.stdout()).as("%s; log: %s", result, jvm.log()).isEqualTo("65534\nserved /nobody\n403");
		}
		assertThat(control()).isEqualTo(List.of("GET /nobody ", "GET /control "));
	}

	/**
	 * In Docker's default confinement only the seccomp mechanism remains: an unprivileged
	 * JVM's execution with an allow-list fails with its code.
	 */
	@Test
	void anUnprivilegedJvmInDockersDefaultConfinementRefusesTheAllowList(@TempDir Path directory) throws Exception {
		ContainerConfinement.assumeAvailable();
		try (ContainerJvm jvm = ContainerJvm.start(directory, Profile.DOCKER_DEFAULT, User.NOBODY,
				MechanismChoice.AUTO)) {
			assertThat(jvm.verdict().mechanism()).as("%s; log: %s", jvm.verdict(), jvm.log()).isEqualTo("seccomp");
			ContainerJvm.Result result = jvm.withEgress("localhost:" + port(), "curl", "http://localhost:" + port());
			assertThat(result.error()).as("%s", result).isEqualTo("cave_sandbox_egress_unavailable");
		}
		assertThat(control()).isEqualTo(List.of("GET /control "));
	}

	private static ProcessIsolatedExecutor allowing(MechanismChoice mechanism, List<String> hosts, boolean privateToo) {
		return LinuxMechanisms.isolated(mechanism,
				(builder) -> builder.allowedHosts(hosts).allowPrivateDestinations(privateToo));
	}

	private static String javaCommand() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	/**
	 * Send the test's own request after the command ended and return everything the
	 * server received: what a command had sent would have come first.
	 */
	private List<String> control() throws IOException, InterruptedException {
		HttpResponse<String> response = HttpClient.newBuilder()
			.proxy(java.net.ProxySelector.of(null))
			.build()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + "/control")).build(),
					HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		return List.copyOf(this.received);
	}

}
