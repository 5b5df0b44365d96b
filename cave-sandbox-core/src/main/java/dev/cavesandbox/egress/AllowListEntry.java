package dev.cavesandbox.egress;

import java.util.Locale;

import dev.cavesandbox.internal.egress.RequestTarget;
import org.jspecify.annotations.Nullable;

/**
 * One entry of an {@link EgressAllowList}, parsed from one of the forms the list
 * describes, and matched against a host and port a client asked for.
 *
 * @param text the normalized entry
 * @param host the host or, for a wildcard, the domain (without brackets)
 * @param wildcard whether it allows the subdomains of {@code host}
 * @param port the port, or {@code 0} for 80 and 443
 */
record AllowListEntry(String text, String host, boolean wildcard, int port) {

	private static final String FORMS = "accepted forms: host, host:port, *.domain, *.domain:port, [IPv6] or [IPv6]:port";

	/**
	 * Parse an entry.
	 * @param entry the entry as written
	 * @return the entry, normalized
	 * @throws IllegalArgumentException naming the entry, what is wrong with it and the
	 * accepted forms
	 */
	static AllowListEntry parse(@Nullable String entry) {
		if (entry == null || entry.isEmpty()) {
			throw invalid(entry, "it is empty");
		}
		checkCharacters(entry);
		String lower = entry.toLowerCase(Locale.ROOT);
		return lower.startsWith("[") ? parseIpv6(entry, lower) : parseName(entry, lower);
	}

	/**
	 * Whether this entry allows a host and port.
	 * @param normalizedHost the host, {@linkplain EgressAllowList#normalizeHost(String)
	 * normalized}
	 * @param requestedPort the port
	 * @return whether it matches
	 */
	boolean matches(String normalizedHost, int requestedPort) {
		boolean portMatches = (this.port == 0) ? (requestedPort == 80 || requestedPort == 443)
				: requestedPort == this.port;
		if (!portMatches) {
			return false;
		}
		if (this.wildcard) {
			return normalizedHost.length() > this.host.length() + 1 && normalizedHost.endsWith("." + this.host);
		}
		return normalizedHost.equals(this.host);
	}

	/** ASCII without blanks or controls, and a host only: no scheme, path or user. */
	private static void checkCharacters(String entry) {
		for (int i = 0; i < entry.length(); i++) {
			char c = entry.charAt(i);
			if (c > 0x7e) {
				throw invalid(entry, "it is not ASCII (write an internationalized name in its xn-- form)");
			}
			if (c <= ' ') {
				throw invalid(entry, "it contains white space or a control character");
			}
		}
		if (entry.contains("://")) {
			throw invalid(entry, "it has a scheme; name the host only");
		}
		if (entry.contains("/") || entry.contains("?") || entry.contains("#") || entry.contains("@")) {
			throw invalid(entry, "it has a path, query or user part; name the host only");
		}
	}

	/** {@code [IPv6]} or {@code [IPv6]:port}. */
	private static AllowListEntry parseIpv6(String entry, String lower) {
		int close = lower.indexOf(']');
		if (close < 0) {
			throw invalid(entry, "an IPv6 literal lacks its closing bracket");
		}
		String hostPart = lower.substring(1, close);
		String rest = lower.substring(close + 1);
		String portPart = null;
		if (!rest.isEmpty()) {
			if (!rest.startsWith(":")) {
				throw invalid(entry, "only :port may follow an IPv6 literal");
			}
			portPart = rest.substring(1);
		}
		if (hostPart.isEmpty() || !hostPart.chars().allMatch(AllowListEntry::isIpv6Character)) {
			throw invalid(entry, "the text in brackets is not an IPv6 literal");
		}
		int port = parsePort(entry, portPart);
		return new AllowListEntry("[" + hostPart + "]" + portText(port), hostPart, false, port);
	}

	/** {@code host}, {@code *.domain}, either with {@code :port}. */
	private static AllowListEntry parseName(String entry, String lower) {
		int colon = lower.indexOf(':');
		if (colon >= 0 && colon != lower.lastIndexOf(':')) {
			throw invalid(entry, "an IPv6 literal must be written in brackets");
		}
		String hostPart = (colon >= 0) ? lower.substring(0, colon) : lower;
		int port = parsePort(entry, (colon >= 0) ? lower.substring(colon + 1) : null);
		boolean wildcard = hostPart.startsWith("*.");
		String host = wildcard ? hostPart.substring(2) : hostPart;
		if (host.endsWith(".")) {
			host = host.substring(0, host.length() - 1);
		}
		if (host.isEmpty()) {
			throw invalid(entry, wildcard ? "a wildcard needs a domain after *." : "it names no host");
		}
		if (host.contains("*")) {
			throw invalid(entry, "a wildcard is allowed only as the whole first label (*.domain)");
		}
		for (String label : host.split("\\.", -1)) {
			if (label.isEmpty()) {
				throw invalid(entry, "it has an empty label");
			}
			if (!label.chars().allMatch(AllowListEntry::isNameCharacter)) {
				throw invalid(entry, "'" + label + "' is not a host name label (letters, digits, - and _)");
			}
		}
		return new AllowListEntry((wildcard ? "*." : "") + host + portText(port), host, wildcard, port);
	}

	private static String portText(int port) {
		return (port != 0) ? ":" + port : "";
	}

	private static int parsePort(String entry, @Nullable String portPart) {
		if (portPart == null) {
			return 0;
		}
		int port = RequestTarget.portNumber(portPart);
		if (port < 0) {
			throw invalid(entry, "the port is not a number from 1 to 65535");
		}
		return port;
	}

	private static boolean isNameCharacter(int c) {
		return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
	}

	private static boolean isIpv6Character(int c) {
		return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9') || c == ':' || c == '.';
	}

	private static IllegalArgumentException invalid(@Nullable String entry, String why) {
		return new IllegalArgumentException(
				"Egress allow-list entry '" + entry + "' is not valid: " + why + " (" + FORMS + ")");
	}

}
