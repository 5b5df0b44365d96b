package dev.cavesandbox.compat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.util.Version;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an application on any supported Spring Boot line gets from the starter with actuator, in
 * types both lines share: a real isolated execution, recorded as a timer. A subclass per line adds
 * the line's own health types.
 */
@TestPropertySource(properties = { "cave.sandbox.egress.allow-private-destinations=true",
		"cave.sandbox.output-files.max-size=1KB" })
abstract class IsolatedApplicationChecks {

	@Autowired
	private IsolatedExecutor executor;

	@Autowired
	private MeterRegistry meterRegistry;

	/**
	 * Return the Spring Boot line the subclass's application runs on.
	 * @return the version prefix, for example {@code "3.5."}
	 */
	abstract String springBootLine();

	@Test
	void runsOnItsSpringBootLine() {
		assertThat(SpringBootVersion.getVersion()).startsWith(springBootLine());
	}

	@Test
	void isolatedExecutionRunsAndIsRecorded() {
		ExecutionResult result = this.executor.execute("id", "-u");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().trim()).matches("[0-9]+");
		assertThat(result.isolation().networkIsolated()).isTrue();
		assertThat(this.meterRegistry.get("cave.sandbox.execution").tag("isolated", "true").timer().count())
			.isPositive();
	}

	@Test
	void outputFilesComeBackWithinTheConfiguredCap() {
		ExecutionResult result = this.executor.execute(ExecutionRequest
			.builder("sh", "-c", "head -c 1000 /dev/zero > fits.bin && head -c 1000 /dev/zero > over.bin")
			.outputFile("fits.bin")
			.outputFile("over.bin")
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.outputFile("fits.bin")).hasValueSatisfying((content) -> assertThat(content).hasSize(1000));
		assertThat(result.outputFiles().omitted()).as("past cave.sandbox.output-files.max-size").containsExactly("over.bin");
		assertThat(result.outputFilesTruncated()).isTrue();
	}

	@Test
	void sandboxedCommandCannotReachAHostLoopbackListener() throws Exception {
		try (ServerSocketChannel listener = ServerSocketChannel.open()) {
			listener.bind(new InetSocketAddress("127.0.0.1", 0));
			listener.configureBlocking(false);
			int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
			String connect = "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected";

			ExecutionResult result = this.executor.execute("bash", "-c", connect);
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			assertThat(result.stdoutText()).doesNotContain("connected");
			assertThat(result.stderrText()).contains("/dev/tcp/127.0.0.1/" + port);
			assertThat(result.isolation().networkIsolated()).isTrue();
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("a connection reached the host's listener").isNull();
			}

			// Control: the same command, run by this JVM without the sandbox, does connect.
			assertThat(unsandboxed(connect)).isZero();
			listener.configureBlocking(true);
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).isNotNull();
			}
		}
	}

	/**
	 * The egress proxy with the Netty that the line manages (4.1 on Boot 3.5, 4.2 on 4.x): a
	 * POST forwarded through it to this test's loopback server (private destinations allowed
	 * for this application) arrives with its body, and the answer comes back.
	 */
	@Test
	void egressProxyForwardsARequestWithTheLinesNetty() throws Exception {
		HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		server.createContext("/", (exchange) -> {
			byte[] answer = ("through the proxy: " + new String(exchange.getRequestBody().readAllBytes(),
					StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(200, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		});
		server.start();
		try {
			String target = "127.0.0.1:" + server.getAddress().getPort();
			ExecutionResult result = this.executor.execute(ExecutionRequest
				.builder("curl", "-sS", "--data-binary", "posted", "http://" + target + "/")
				.allowedHosts(target)
				.build());
			assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("through the proxy: posted");
			assertThat(result.egressDecisions()).singleElement()
				.satisfies((decision) -> assertThat(decision.allowed()).isTrue());
			System.out.println("Netty on this line: " + Version.identify().get("netty-codec-http"));
		}
		finally {
			server.stop(0);
		}
	}

	private static int unsandboxed(String script) throws IOException, InterruptedException {
		Process process = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
		process.getInputStream().transferTo(OutputStream.nullOutputStream());
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the unsandboxed control did not hang").isTrue();
		return process.exitValue();
	}

}
