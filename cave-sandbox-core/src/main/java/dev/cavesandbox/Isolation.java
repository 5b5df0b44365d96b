package dev.cavesandbox;

/**
 * The isolation that was actually applied to one execution.
 *
 * @param mechanism the mechanism that isolated the command (for example {@code unshare}),
 * or {@code none} when it ran unisolated in fallback mode
 * @param networkIsolated whether the command ran without network access
 */
public record Isolation(String mechanism, boolean networkIsolated) {

	/** An execution that ran without any isolation (fallback mode). */
	public static final Isolation NONE = new Isolation("none", false);

	@Override
	public String toString() {
		return this.networkIsolated ? this.mechanism + " (network isolated)" : "none (NOT network isolated)";
	}

}
