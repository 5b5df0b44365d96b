package dev.cavesandbox;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of an executor's pool of warm sandboxes ({@link WarmPoolSettings}): how many
 * wait, and what happened to the claims and the sandboxes since the executor started.
 * Counts only grow; health and metrics read them.
 *
 * @param size the configured size ({@code cave.sandbox.warm.size}); {@code 0}: no pool
 * @param ready sandboxes set up and waiting for an execution
 * @param preparing sandboxes being set up
 * @param hits executions that took a warm sandbox
 * @param misses executions that took the cold path, by reason
 * @param discards sandboxes torn down without serving an execution, by reason
 * @param preparations sandboxes set up (ready or not)
 * @param preparationTime the time of those preparations, all together
 * @param suspended why the pool stopped preparing for a while (repeated failures), or
 * {@code null} while it prepares
 */
public record WarmPoolState(int size, int ready, int preparing, long hits, Map<Miss, Long> misses,
		Map<Discard, Long> discards, long preparations, Duration preparationTime, @Nullable String suspended) {

	/** The state of an executor without a pool. */
	public static final WarmPoolState OFF = new WarmPoolState(0, 0, 0, 0, Map.of(), Map.of(), 0, Duration.ZERO, null);

	public WarmPoolState {
		misses = copy(misses, Miss.class);
		discards = copy(discards, Discard.class);
		Objects.requireNonNull(preparationTime, "preparationTime must not be null");
	}

	/**
	 * Return the executions that took the cold path, whatever the reason.
	 * @return the count
	 */
	public long missCount() {
		return this.misses.values().stream().mapToLong(Long::longValue).sum();
	}

	private static <K extends Enum<K>> Map<K, Long> copy(Map<K, Long> counts, Class<K> type) {
		Map<K, Long> all = new EnumMap<>(type);
		for (K key : type.getEnumConstants()) {
			all.put(key, counts.getOrDefault(key, 0L));
		}
		return Map.copyOf(all);
	}

	/** Why an execution took the cold path. */
	public enum Miss {

		/** No sandbox was ready (the pool is being refilled or is suspended). */
		EMPTY,

		/** The request names a working directory of its own. */
		WORKING_DIRECTORY,

		/** The request lists readable or writable paths. */
		LISTED_PATHS,

		/** The request has an egress allow-list. */
		EGRESS,

		/** The request's loopback differs from the settings'. */
		LOOPBACK,

		/** The request's resource limits differ from the settings'. */
		LIMITS

	}

	/** Why a sandbox was torn down without serving an execution. */
	public enum Discard {

		/** It waited longer than {@code cave.sandbox.warm.max-age}. */
		AGE,

		/** It had ended before it was claimed. */
		DIED,

		/** A path of the filesystem view changed since it was set up. */
		VIEW_CHANGED,

		/** It did not report ready within the probe timeout. */
		NOT_READY,

		/** The executor was closed. */
		CLOSED

	}

}
