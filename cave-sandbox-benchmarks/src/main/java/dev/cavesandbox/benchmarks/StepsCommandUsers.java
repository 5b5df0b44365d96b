package dev.cavesandbox.benchmarks;

import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.launcher.CommandUsers;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The command users of {@link ExecutorStepsBenchmark#commandUserAcquire} and
 * {@link ExecutorStepsBenchmark#commandUserCheck}.
 */
@State(Scope.Benchmark)
public class StepsCommandUsers {

	/** 16 uids apart from the default range. */
	static final SandboxSettings.CommandUserRange RANGE = SandboxSettings.CommandUserRange.parse("66900-66915");

	/**
	 * Another range: the executors of one range share its uids (one pool per range in the
	 * JVM).
	 */
	private static final SandboxSettings.CommandUserRange IN_PLACE_RANGE = SandboxSettings.CommandUserRange
		.parse("66916-66931");

	/** The checks released uids wait for, as on the cleaner's queue. */
	final List<Runnable> checks = new ArrayList<>();

	final CommandUsers checkedElsewhere = new CommandUsers(RANGE, this.checks::add);

	final CommandUsers checkedInPlace = new CommandUsers(IN_PLACE_RANGE);

	/** The cleaner's turn between two executions: not measured. */
	@Setup(Level.Invocation)
	public void check() {
		this.checks.forEach(Runnable::run);
		this.checks.clear();
	}

}
