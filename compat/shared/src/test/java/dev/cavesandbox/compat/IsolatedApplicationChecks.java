package dev.cavesandbox.compat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an application on any supported Spring Boot line gets from the starter with actuator, in
 * types both lines share: a real isolated execution, recorded as a timer. A subclass per line adds
 * the line's own health types.
 */
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

	private static int unsandboxed(String script) throws IOException, InterruptedException {
		Process process = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
		process.getInputStream().transferTo(OutputStream.nullOutputStream());
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the unsandboxed control did not hang").isTrue();
		return process.exitValue();
	}

}
