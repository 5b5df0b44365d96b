package dev.cavesandbox;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.jspecify.annotations.Nullable;

/**
 * The executors one test class shares between its tests: one isolated executor per
 * mechanism ({@link LinuxMechanisms#isolated}), created when first asked for, and one
 * unisolated, all with the same settings; the class closes them after its tests.
 */
public final class SharedExecutors implements AutoCloseable {

	private final Map<MechanismChoice, ProcessIsolatedExecutor> isolated = new ConcurrentHashMap<>();

	private final UnaryOperator<SandboxSettings.Builder> customizer;

	private @Nullable ProcessIsolatedExecutor unisolated;

	/**
	 * Executors with the given settings.
	 * @param customizer the settings of every executor, over the defaults
	 */
	public SharedExecutors(UnaryOperator<SandboxSettings.Builder> customizer) {
		this.customizer = customizer;
	}

	/**
	 * Return the isolated executor of a mechanism.
	 * @param mechanism the mechanism
	 * @return the executor, verified by the probe
	 */
	public ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return this.isolated.computeIfAbsent(mechanism, (choice) -> LinuxMechanisms.isolated(choice, this.customizer));
	}

	/**
	 * Return the unisolated executor.
	 * @return the executor
	 */
	public synchronized ProcessIsolatedExecutor unisolated() {
		if (this.unisolated == null) {
			this.unisolated = ProcessIsolatedExecutor
				.unisolated(this.customizer.apply(SandboxSettings.builder()).build());
		}
		return this.unisolated;
	}

	@Override
	public synchronized void close() {
		if (this.unisolated != null) {
			this.unisolated.close();
		}
		this.isolated.values().forEach(ProcessIsolatedExecutor::close);
	}

}
