package dev.cavesandbox.internal.egress;

import dev.cavesandbox.egress.EgressDecision;
import org.jspecify.annotations.Nullable;

/**
 * A request the proxy refuses, thrown by the steps of an {@link EgressConnection} that
 * check it: the status it is answered with, the reason it is recorded with (an
 * {@link EgressDecision} reason) and the line that says why, to the client and the log.
 */
final class Refusal extends Exception {

	private final int status;

	private final String statusText;

	private final String reason;

	private final @Nullable RequestTarget target;

	private final String why;

	/**
	 * A refusal.
	 * @param status the response's status, such as {@code 403}
	 * @param statusText its reason phrase, such as {@code Forbidden}
	 * @param reason the decision's reason, such as {@link EgressDecision#NOT_ALLOWED}
	 * @param target the target refused, or {@code null} when the request named none
	 * @param why what the response's line and the log say
	 */
	Refusal(int status, String statusText, String reason, @Nullable RequestTarget target, String why) {
		super(why, null, false, false);
		this.status = status;
		this.statusText = statusText;
		this.reason = reason;
		this.target = target;
		this.why = why;
	}

	/** {@code 400}: a malformed or unsupported request. */
	static Refusal badRequest(String why) {
		return new Refusal(400, "Bad Request", EgressDecision.BAD_REQUEST, null, "bad request: " + why);
	}

	/** {@code 403}: a target the policy does not allow. */
	static Refusal forbidden(String reason, RequestTarget target, String why) {
		return new Refusal(403, "Forbidden", reason, target, why);
	}

	/** {@code 502}: a target that does not resolve or cannot be reached. */
	static Refusal badGateway(String reason, RequestTarget target, String why) {
		return new Refusal(502, "Bad Gateway", reason, target, why);
	}

	int status() {
		return this.status;
	}

	String statusText() {
		return this.statusText;
	}

	String why() {
		return this.why;
	}

	/** The decision recorded: refused, for the target's host and port if it has one. */
	EgressDecision decision() {
		String host = (this.target != null) ? this.target.host() : "";
		int port = (this.target != null) ? this.target.port() : 0;
		return new EgressDecision(host, port, false, this.reason, null);
	}

}
