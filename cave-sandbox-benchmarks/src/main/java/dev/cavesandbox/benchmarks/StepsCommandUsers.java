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

	/**
	 * The uids checked elsewhere: 2048 apart from the default range, more than the
	 * releases between two checks.
	 */
	static final SandboxSettings.CommandUserRange RANGE = SandboxSettings.CommandUserRange.parse("66900-68947");

	/**
	 * Another range: the executors of one range share its uids (one pool per range in the
	 * JVM).
	 */
	private static final SandboxSettings.CommandUserRange IN_PLACE_RANGE = SandboxSettings.CommandUserRange
		.parse("68948-68963");

	/** The releases between two checks. */
	private static final int RELEASES_PER_CHECK = 1024;

	/** The check released uids wait for, as on the cleaner's queue (one at most). */
	final List<Runnable> checks = new ArrayList<>();

	final CommandUsers checkedElsewhere = new CommandUsers(RANGE, this.checks::add);

	final CommandUsers checkedInPlace = new CommandUsers(IN_PLACE_RANGE);

	private int calls;

	/**
	 * The cleaner's turn, not measured: one check of the uids released by the last
	 * {@value #RELEASES_PER_CHECK} calls (a check serves every release before it, as on
	 * the cleaner; a scan of {@code /proc} before every call would leave the measured
	 * code too few calls to be compiled).
	 */
	@Setup(Level.Invocation)
	public void check() {
		if (++this.calls % RELEASES_PER_CHECK == 0) {
			this.checks.forEach(Runnable::run);
			this.checks.clear();
		}
	}

}
