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
 * {@link SandboxSettings#maxConcurrent()}; {@code 0} (the default) turns the pool off
 * @param maxAge how long a sandbox may wait before it is discarded and replaced (default
 * {@value #DEFAULT_MAX_AGE_SECONDS} s)
 */
public record WarmPoolSettings(int size, Duration maxAge) {

	/** The default of {@link #maxAge()}, in seconds: 60. */
	public static final long DEFAULT_MAX_AGE_SECONDS = 60;

	/** No pool: every execution takes the cold path. */
	public static final WarmPoolSettings OFF = new WarmPoolSettings(0, Duration.ofSeconds(DEFAULT_MAX_AGE_SECONDS));

	public WarmPoolSettings {
		if (size < 0) {
			throw new IllegalArgumentException("warm.size must not be negative, but was " + size);
		}
		PositiveAmounts.require("warm.maxAge", maxAge, IllegalArgumentException::new);
	}

	/**
	 * Return whether the pool is on ({@code size > 0}).
	 * @return whether sandboxes are prepared ahead
	 */
	public boolean enabled() {
		return this.size > 0;
	}

}
