package dev.cavesandbox;

import java.time.Duration;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The rule of the durations, byte sizes and counts of settings and requests: positive.
 * Each check fails with {@code "NAME must be positive, but was VALUE"}, thrown as the
 * caller's exception ({@link IllegalArgumentException} for settings,
 * {@link InvalidExecutionRequestException} for a request).
 */
final class PositiveAmounts {

	private PositiveAmounts() {
	}

	static <X extends RuntimeException> Duration require(String name, @Nullable Duration value,
			Function<String, X> failure) {
		if (value == null || value.isZero() || value.isNegative()) {
			throw failure.apply(mustBePositive(name, value));
		}
		return value;
	}

	static <X extends RuntimeException> long require(String name, long value, Function<String, X> failure) {
		if (value <= 0) {
			throw failure.apply(mustBePositive(name, value));
		}
		return value;
	}

	private static String mustBePositive(String name, @Nullable Object value) {
		return name + " must be positive, but was " + value;
	}

}
