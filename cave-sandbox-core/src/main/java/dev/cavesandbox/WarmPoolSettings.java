package dev.cavesandbox;

import java.time.Duration;

/**
 * The executor's pool of warm sandboxes: sandboxes set up ahead on the verified
 * mechanism, each waiting for exactly one execution whose request fits the settings'
 * shape (no listed paths, no egress, the settings' loopback and limits); any other
 * request, and any request while the pool is empty, takes the cold path at once. A warm
 * sandbox serves one execution and is then torn down; one older than {@code maxAge} is
 * discarded unused.
 *
 * @param size how many sandboxes wait ready, at most
 * {@link SandboxSettings#maxConcurrent()}; {@code 0} turns the pool off (default
 * {@value #DEFAULT_SIZE}, fewer where the settings hold fewer: {@link #fitting})
 * @param maxAge how long a sandbox may wait before it is discarded and replaced (default
 * {@value #DEFAULT_MAX_AGE_SECONDS} s)
 */
public record WarmPoolSettings(int size, Duration maxAge) {

	/** The default of {@link #maxAge()}, in seconds: 60. */
	public static final long DEFAULT_MAX_AGE_SECONDS = 60;

	/**
	 * The default of {@link #size()}: 2. One caller back to back gains most with two
	 * (BENCHMARKS.md: the second is prepared while the first serves); more add processes
	 * that wait, not speed.
	 */
	public static final int DEFAULT_SIZE = 2;

	/**
	 * The default pool, before {@link #fitting} fits it to the settings:
	 * {@value #DEFAULT_SIZE} sandboxes, each waiting at most
	 * {@value #DEFAULT_MAX_AGE_SECONDS} s.
	 */
	public static final WarmPoolSettings DEFAULT = new WarmPoolSettings(DEFAULT_SIZE,
			Duration.ofSeconds(DEFAULT_MAX_AGE_SECONDS));

	/** No pool: every execution takes the cold path. */
	public static final WarmPoolSettings OFF = new WarmPoolSettings(0, Duration.ofSeconds(DEFAULT_MAX_AGE_SECONDS));

	public WarmPoolSettings {
		if (size < 0) {
			throw new IllegalArgumentException("warm.size must not be negative, but was " + size);
		}
		PositiveAmounts.require("warm.maxAge", maxAge, IllegalArgumentException::new);
	}

	/**
	 * Return this pool made no larger than settings allow: at most {@code maxConcurrent}
	 * sandboxes, and no more than the command user range holds beside
	 * {@code maxConcurrent} executions (a waiting sandbox of a root JVM on the seccomp
	 * mechanism holds a uid of its own). The default pool is fitted this way; a size set
	 * explicitly is not, and {@link SandboxSettings} refuses one that does not fit.
	 * @param maxConcurrent the settings' {@link SandboxSettings#maxConcurrent()}
	 * @param commandUids how many uids the command user range holds
	 * @return this pool, or a smaller one ({@code 0}: off) with the same
	 * {@link #maxAge()}
	 */
	public WarmPoolSettings fitting(int maxConcurrent, long commandUids) {
		long room = Math.max(0, commandUids - maxConcurrent);
		int fitted = (int) Math.min(Math.min(this.size, Math.max(0, maxConcurrent)), room);
		return (fitted == this.size) ? this : new WarmPoolSettings(fitted, this.maxAge);
	}

	/**
	 * Return whether the pool is on ({@code size > 0}).
	 * @return whether sandboxes are prepared ahead
	 */
	public boolean enabled() {
		return this.size > 0;
	}

}
