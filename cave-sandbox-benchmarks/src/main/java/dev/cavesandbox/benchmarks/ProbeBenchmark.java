package dev.cavesandbox.benchmarks;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The startup probe: {@link NetworkIsolationProbe#probe()} with the default settings
 * ({@code cave.sandbox.mechanism=auto}: bubblewrap first on Linux, then unshare), as an
 * application pays it once at startup. {@link IsolationCostRun} measures it warm (latency
 * over many calls) and cold (the first call in a fresh JVM, one per fork).
 */
@State(Scope.Benchmark)
public class ProbeBenchmark {

	private final SandboxSettings settings = SandboxSettings.defaults();

	@Benchmark
	public IsolationCapability probe() {
		IsolationCapability capability = new NetworkIsolationProbe(this.settings).probe();
		if (!capability.available()) {
			throw new IllegalStateException("the probe did not verify isolation: " + capability);
		}
		return capability;
	}

}
