package dev.cavesandbox.autoconfigure.observation;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.ResourceLimit;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.WarmPoolState;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import dev.cavesandbox.autoconfigure.WarmPoolReporting;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.UnavailableIsolatedExecutor;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Observations of REAL executions on this Linux host, isolated and unisolated, recorded
 * in a {@link TestObservationRegistry}.
 */
@EnabledOnOs(OS.LINUX)
class ObservedIsolatedExecutorTests {

	private static final String NAME = "cave.sandbox.execution";

	private static SandboxSettings settings;

	private static IsolationCapability capability;

	private static ProcessIsolatedExecutor isolated;

	private static ProcessIsolatedExecutor unisolated;

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	@BeforeAll
	static void createExecutors() {
		settings = HostSandboxes.settings();
		capability = HostSandboxes.verified();
		isolated = ProcessIsolatedExecutor.isolated(settings, capability);
		unisolated = ProcessIsolatedExecutor.unisolated(settings);
	}

	@AfterAll
	static void closeExecutors() {
		isolated.close();
		unisolated.close();
	}

	@Test
	void successfulIsolatedExecutionIsObservedWithItsKeys() {
		ExecutionResult result = observed(isolated).execute("true");
		assertThat(result.succeeded()).isTrue();
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasNameEqualTo(NAME)
			.hasContextualNameEqualTo("sandbox execution")
			.hasLowCardinalityKeyValue("mechanism", capability.mechanismName())
			.hasLowCardinalityKeyValue("isolated", "true")
			.hasLowCardinalityKeyValue("outcome", "SUCCESS")
			.hasLowCardinalityKeyValue("error.code", "none")
			.hasLowCardinalityKeyValue("limit", "none")
			.hasHighCardinalityKeyValue("command", "true")
			.hasHighCardinalityKeyValue("exit.code", "0")
			.doesNotHaveError()
			.hasBeenStarted()
			.hasBeenStopped();
	}

	@Test
	void nonZeroExitIsObservedWithTheCommandButNeverItsArguments() {
		ExecutionResult result = observed(isolated).execute("sh", "-c", "exit 3", "sh", "arg-secret-9f2c");
		assertThat(result.exitCode()).isEqualTo(3);
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("outcome", "NON_ZERO_EXIT")
			.hasLowCardinalityKeyValue("error.code", "none")
			.hasHighCardinalityKeyValue("command", "sh")
			.hasHighCardinalityKeyValue("exit.code", "3")
			.hasBeenStopped();
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasHandledContextsThatSatisfy((contexts) -> assertThat(contexts).singleElement()
				.satisfies((context) -> assertThat(context.getAllKeyValues()).extracting(KeyValue::getValue)
					.noneMatch((value) -> value.contains("secret") || value.contains("exit 3"))));
	}

	/**
	 * The command dies of the signal of a limit that is in effect (sent by itself: the
	 * kernel's is the same signal).
	 */
	@Test
	void limitThatEndedTheCommandIsObservedWithItsPropertyName() {
		ResourceLimits limits = ResourceLimits.builder().cpuTime(Duration.ofSeconds(60)).fileSize(1024 * 1024).build();
		ExecutionResult result = observed(isolated)
			.execute(ExecutionRequest.builder("sh", "-c", "kill -XFSZ $$").limits(limits).build());
		assertThat(result.limitExceeded()).isEqualTo(ResourceLimit.FILE_SIZE);
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("outcome", "NON_ZERO_EXIT")
			.hasLowCardinalityKeyValue("limit", "file-size")
			.hasHighCardinalityKeyValue("exit.code", "153")
			.hasBeenStopped();
		this.registry.clear();
		observed(isolated).execute(ExecutionRequest.builder("sh", "-c", "kill -XCPU $$").limits(limits).build());
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("limit", "cpu-time");
	}

	/**
	 * Without the limit the same signal is no limit: {@code none}, as for a refused
	 * execution.
	 */
	@Test
	void signalWithoutItsLimitIsObservedAsNoLimit() {
		observed(isolated).execute("sh", "-c", "kill -XFSZ $$");
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("outcome", "NON_ZERO_EXIT")
			.hasLowCardinalityKeyValue("limit", "none")
			.hasHighCardinalityKeyValue("exit.code", "153");
	}

	@Test
	void timeoutIsObservedAsTimeout() {
		ExecutionRequest request = ExecutionRequest.builder("sleep", "30").timeout(Duration.ofMillis(300)).build();
		ExecutionResult result = observed(isolated).execute(request);
		assertThat(result.timedOut()).isTrue();
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("outcome", "TIMEOUT")
			.hasLowCardinalityKeyValue("isolated", "true")
			.hasHighCardinalityKeyValue("exit.code", String.valueOf(result.exitCode()))
			.hasBeenStopped();
	}

	@Test
	void failureIsObservedAsErrorWithItsCode() {
		assertThatExceptionOfType(CommandNotFoundException.class)
			.isThrownBy(() -> observed(isolated).execute("no-such-command-cave5"));
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("outcome", "ERROR")
			.hasLowCardinalityKeyValue("error.code", CommandNotFoundException.CODE)
			.hasLowCardinalityKeyValue("mechanism", capability.mechanismName())
			.hasHighCardinalityKeyValue("command", "no-such-command-cave5")
			.doesNotHaveHighCardinalityKeyValueWithKey("exit.code")
			.hasError()
			.hasBeenStopped();
	}

	@Test
	void refusedExecutionInStrictModeIsObservedAsUnisolatedError() {
		IsolatedExecutor executor = observed(new UnavailableIsolatedExecutor(HostSandboxes.missingUnshare()));
		assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
			.isThrownBy(() -> executor.execute("true"));
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("outcome", "ERROR")
			.hasLowCardinalityKeyValue("error.code", NetworkIsolationUnavailableException.CODE)
			.hasLowCardinalityKeyValue("limit", "none")
			.hasLowCardinalityKeyValue("mechanism", "none")
			.hasLowCardinalityKeyValue("isolated", "false")
			.hasBeenStopped();
	}

	@Test
	void unisolatedExecutionIsObservedAsNotIsolated() {
		ExecutionResult result = observed(unisolated).execute("true");
		assertThat(result.isolation()).isEqualTo(Isolation.NONE);
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasLowCardinalityKeyValue("mechanism", "none")
			.hasLowCardinalityKeyValue("isolated", "false")
			.hasLowCardinalityKeyValue("outcome", "SUCCESS");
	}

	@Test
	void startedProcessIsObservedFromTheCallUntilItsTreeHasEnded() throws Exception {
		SandboxedProcess process = observed(isolated).start(ExecutionRequest.of("sh", "-c", "read line; exit 5"));
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasNameEqualTo("cave.sandbox.process")
			.hasBeenStarted()
			.isNotStopped();
		process.stdin().write("go\n".getBytes(StandardCharsets.UTF_8));
		process.stdin().close();
		assertThat(process.waitFor()).isEqualTo(5);
		await().untilAsserted(() -> TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasBeenStopped()
			.hasContextualNameEqualTo("sandboxed process")
			.hasLowCardinalityKeyValue("mechanism", capability.mechanismName())
			.hasLowCardinalityKeyValue("isolated", "true")
			.hasLowCardinalityKeyValue("outcome", "NON_ZERO_EXIT")
			.hasHighCardinalityKeyValue("command", "sh")
			.hasHighCardinalityKeyValue("exit.code", "5")
			.doesNotHaveError());
	}

	@Test
	void startedProcessThatTimedOutIsObservedAsTimeout() {
		SandboxedProcess process = observed(isolated)
			.start(ExecutionRequest.builder("sleep", "30").timeout(Duration.ofMillis(300)).build());
		process.onExit().join();
		await().untilAsserted(() -> TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("outcome", "TIMEOUT"));
	}

	@Test
	void refusedStartInStrictModeIsObservedAsError() {
		IsolatedExecutor executor = observed(new UnavailableIsolatedExecutor(HostSandboxes.missingUnshare()));
		assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
			.isThrownBy(() -> executor.start(ExecutionRequest.of("cat")));
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasNameEqualTo("cave.sandbox.process")
			.hasLowCardinalityKeyValue("outcome", "ERROR")
			.hasLowCardinalityKeyValue("error.code", NetworkIsolationUnavailableException.CODE)
			.hasBeenStopped();
	}

	@Test
	void asyncExecutionIsObservedUntilItsFutureCompletes() {
		ExecutionResult result = observed(isolated).executeAsync(ExecutionRequest.of("sh", "-c", "exit 4")).join();
		assertThat(result.exitCode()).isEqualTo(4);
		await().untilAsserted(() -> TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("outcome", "NON_ZERO_EXIT")
			.hasHighCardinalityKeyValue("exit.code", "4"));
	}

	@Test
	void cancelledAsyncExecutionIsObservedAsCancelled() {
		CompletableFuture<ExecutionResult> future = observed(isolated).executeAsync(ExecutionRequest.of("sleep", "30"));
		assertThat(future.cancel(true)).isTrue();
		assertThatExceptionOfType(CancellationException.class).isThrownBy(future::join);
		await().untilAsserted(() -> TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("outcome", "ERROR")
			.hasLowCardinalityKeyValue("error.code", ExecutionCancelledException.CODE));
	}

	@Test
	void executionInsideAnObservationIsItsChild() {
		Observation parent = Observation.start("caller", this.registry);
		try (Observation.Scope scope = parent.openScope()) {
			observed(isolated).execute("true");
		}
		parent.stop();
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasObservationWithNameEqualTo(NAME)
			.that()
			.hasParentObservationEqualTo(parent);
	}

	@Test
	void customConventionReplacesTheDefault() {
		SandboxExecutionObservationConvention convention = new DefaultSandboxExecutionObservationConvention() {

			@Override
			public String getName() {
				return "custom.sandbox";
			}

		};
		new ObservedIsolatedExecutor(isolated, this.registry, convention).execute("true");
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasSingleObservationThat()
			.hasNameEqualTo("custom.sandbox")
			.hasLowCardinalityKeyValue("outcome", "SUCCESS");
	}

	@Test
	void isolationAndCloseReachTheDelegate() {
		ProcessIsolatedExecutor own = ProcessIsolatedExecutor.isolated(settings, capability);
		IsolatedExecutor executor = observed(own);
		assertThat(executor.isolation()).isEqualTo(new Isolation(capability.mechanismName(), true));
		executor.close();
		assertThatExceptionOfType(ExecutionCancelledException.class).isThrownBy(() -> own.execute("true"));
	}

	@Test
	void warmPoolStateIsTheDelegates() {
		WarmPoolState state = new WarmPoolState(2, 1, 1, 7, Map.of(), Map.of(), 8, Duration.ofMillis(80), null);
		ProcessIsolatedExecutor own = ProcessIsolatedExecutor.isolated(settings, capability);
		IsolatedExecutor delegate = new WarmPoolReporting(own, () -> state);
		try (IsolatedExecutor executor = observed(delegate)) {
			assertThat(executor.warmPool()).isSameAs(state);
		}
	}

	private IsolatedExecutor observed(IsolatedExecutor delegate) {
		return new ObservedIsolatedExecutor(delegate, this.registry, null);
	}

}
