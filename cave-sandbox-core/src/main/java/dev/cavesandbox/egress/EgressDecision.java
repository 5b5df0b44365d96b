package dev.cavesandbox.egress;

import dev.cavesandbox.internal.egress.DestinationAddresses;
import org.jspecify.annotations.Nullable;

/**
 * What the egress proxy decided about one client connection.
 *
 * @param host the host as the client named it, normalized (lower case, no trailing dot,
 * no IPv6 brackets); empty when the request was too malformed to name one
 * @param port the requested port; {@code 0} when the request named none
 * @param allowed whether a connection to the destination was made
 * @param reason {@value #ALLOWED}, or the refusal: {@value #NOT_ALLOWED} (host and port
 * not in the allow-list), {@value #PRIVATE_DESTINATION} (the name resolved to an address
 * {@link DestinationAddresses} refuses), {@value #UNRESOLVED} (the name does not
 * resolve), {@value #CONNECT_FAILED} or {@value #BAD_REQUEST} (unparseable, oversized,
 * unsupported method or a URI that is not absolute-form)
 * @param address the checked IP address the proxy connected to, or {@code null} when it
 * connected nowhere
 */
public record EgressDecision(String host, int port, boolean allowed, String reason, @Nullable String address) {

	/** The reason of an allowed connection. */
	public static final String ALLOWED = "allowed";

	/** Refused: the host and port are not in the allow-list. */
	public static final String NOT_ALLOWED = "not_allowed";

	/** Refused: the name resolved to a refused address (SSRF). */
	public static final String PRIVATE_DESTINATION = "private_destination";

	/** Refused: the name does not resolve. */
	public static final String UNRESOLVED = "unresolved";

	/** Allowed, but no connection could be made to any of the checked addresses. */
	public static final String CONNECT_FAILED = "connect_failed";

	/** The request could not be understood or is not supported. */
	public static final String BAD_REQUEST = "bad_request";

}
