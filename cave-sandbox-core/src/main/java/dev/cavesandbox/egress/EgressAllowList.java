package dev.cavesandbox.egress;

import dev.cavesandbox.internal.egress.EgressProxy;
import dev.cavesandbox.internal.egress.RequestTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The hosts and ports the clients of an {@link EgressProxy} may ask for. Each entry is
 * one of:
 * <ul>
 * <li>{@code host}: that host on ports 80 and 443;</li>
 * <li>{@code host:port}: that host on that port only (1 to 65535);</li>
 * <li>{@code *.domain}: any subdomain of {@code domain} (not {@code domain} itself) on
 * ports 80 and 443; {@code *.domain:port} the same on that port only;</li>
 * <li>{@code [IPv6]} or {@code [IPv6]:port}: an IPv6 literal, in brackets.</li>
 * </ul>
 * Hosts are ASCII names or IP literals, compared case-insensitively and without a
 * trailing dot, and matched against the host as the client named it: an entry
 * {@code example.org} does not allow a client that asks for the address
 * {@code example.org} resolves to, and IP literals are compared as written.
 */
public final class EgressAllowList {

	/** The empty list: nothing is allowed. */
	public static final EgressAllowList NONE = new EgressAllowList(List.of());

	private static final String FORMS = "accepted forms: host, host:port, *.domain, *.domain:port, [IPv6] or [IPv6]:port";

	private final List<Entry> entries;

	private EgressAllowList(List<Entry> entries) {
		this.entries = entries;
	}

	/**
	 * The list of these entries.
	 * @param entries the entries, in order
	 * @return the list
	 * @throws IllegalArgumentException naming the first entry that is not of an accepted
	 * form
	 */
	public static EgressAllowList of(List<String> entries) {
		Objects.requireNonNull(entries, "entries");
		List<Entry> parsed = new ArrayList<>(entries.size());
		for (String entry : entries) {
			parsed.add(Entry.parse(entry));
		}
		return parsed.isEmpty() ? NONE : new EgressAllowList(List.copyOf(parsed));
	}

	/**
	 * Whether the list has no entry (nothing is allowed).
	 * @return whether it is empty
	 */
	public boolean isEmpty() {
		return this.entries.isEmpty();
	}

	/**
	 * The entries, normalized (lower case, without a trailing dot), in order.
	 * @return the entries
	 */
	public List<String> entries() {
		return this.entries.stream().map(Entry::text).toList();
	}

	/**
	 * Whether a client may ask for this host and port.
	 * @param host the host as the client named it: a name or an IP literal (IPv6 with or
	 * without brackets)
	 * @param port the port
	 * @return whether an entry allows it
	 */
	public boolean allows(String host, int port) {
		return matchingEntry(host, port) != null;
	}

	/**
	 * The first entry that allows this host and port.
	 * @param host the host as the client named it
	 * @param port the port
	 * @return the normalized entry, or {@code null} when none allows it
	 */
	public @Nullable String matchingEntry(String host, int port) {
		String normalized = normalizeHost(host);
		for (Entry entry : this.entries) {
			if (entry.matches(normalized, port)) {
				return entry.text();
			}
		}
		return null;
	}

	/**
	 * A host as a client named it, in the form entries are compared with: lower case,
	 * without a trailing dot or IPv6 brackets.
	 * @param host the host
	 * @return the normalized host
	 */
	public static String normalizeHost(String host) {
		String normalized = host.toLowerCase(Locale.ROOT);
		if (normalized.length() > 1 && normalized.startsWith("[") && normalized.endsWith("]")) {
			normalized = normalized.substring(1, normalized.length() - 1);
		}
		if (normalized.endsWith(".")) {
			normalized = normalized.substring(0, normalized.length() - 1);
		}
		return normalized;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (other instanceof EgressAllowList list) && list.entries().equals(entries());
	}

	@Override
	public int hashCode() {
		return entries().hashCode();
	}

	@Override
	public String toString() {
		return entries().toString();
	}

	/**
	 * One parsed entry.
	 *
	 * @param text the normalized entry
	 * @param host the host or, for a wildcard, the domain (without brackets)
	 * @param wildcard whether it allows the subdomains of {@code host}
	 * @param port the port, or {@code 0} for 80 and 443
	 */
	private record Entry(String text, String host, boolean wildcard, int port) {

		static Entry parse(@Nullable String entry) {
			if (entry == null || entry.isEmpty()) {
				throw invalid(entry, "it is empty");
			}
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
			String lower = entry.toLowerCase(Locale.ROOT);
			String hostPart;
			String portPart = null;
			if (lower.startsWith("[")) {
				int close = lower.indexOf(']');
				if (close < 0) {
					throw invalid(entry, "an IPv6 literal lacks its closing bracket");
				}
				hostPart = lower.substring(1, close);
				String rest = lower.substring(close + 1);
				if (!rest.isEmpty()) {
					if (!rest.startsWith(":")) {
						throw invalid(entry, "only :port may follow an IPv6 literal");
					}
					portPart = rest.substring(1);
				}
				if (hostPart.isEmpty() || !hostPart.chars().allMatch(Entry::isIpv6Character)) {
					throw invalid(entry, "the text in brackets is not an IPv6 literal");
				}
				int port = parsePort(entry, portPart);
				return new Entry("[" + hostPart + "]" + portText(port), hostPart, false, port);
			}
			int colon = lower.indexOf(':');
			if (colon >= 0 && colon != lower.lastIndexOf(':')) {
				throw invalid(entry, "an IPv6 literal must be written in brackets");
			}
			hostPart = (colon >= 0) ? lower.substring(0, colon) : lower;
			if (colon >= 0) {
				portPart = lower.substring(colon + 1);
			}
			int port = parsePort(entry, portPart);
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
				if (!label.chars().allMatch(Entry::isNameCharacter)) {
					throw invalid(entry, "'" + label + "' is not a host name label (letters, digits, - and _)");
				}
			}
			return new Entry((wildcard ? "*." : "") + host + portText(port), host, wildcard, port);
		}

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

}
