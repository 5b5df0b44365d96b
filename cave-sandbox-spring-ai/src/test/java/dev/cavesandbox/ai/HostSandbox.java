package dev.cavesandbox.ai;

import java.time.Duration;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.SandboxSettings;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The executor of this host's real sandbox that the tests of this package share: probed
 * once, never closed (what it still runs dies with the test JVM).
 */
final class HostSandbox {

	private static @Nullable IsolatedExecutor executor;

	private HostSandbox() {
	}

	/**
	 * Return the shared executor, which isolates.
	 * @return the executor
	 */
	static synchronized IsolatedExecutor isolatedExecutor() {
		if (executor == null) {
			executor = create();
		}
		return executor;
	}

	private static IsolatedExecutor create() {
		IsolatedExecutor executor = IsolatedExecutors.create(SandboxSettings.builder()
			.timeout(Duration.ofSeconds(20))
			.killGracePeriod(Duration.ofMillis(200))
			.build());
		assertThat(executor.isolation().networkIsolated()).as("isolation of %s", executor).isTrue();
		return executor;
	}

}
