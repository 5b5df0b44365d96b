package dev.cavesandbox.egress;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import dev.cavesandbox.internal.egress.EgressProxy;
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

	private final List<AllowListEntry> entries;

	private EgressAllowList(List<AllowListEntry> entries) {
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
		List<AllowListEntry> parsed = new ArrayList<>(entries.size());
		for (String entry : entries) {
			parsed.add(AllowListEntry.parse(entry));
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
		return this.entries.stream().map(AllowListEntry::text).toList();
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
		for (AllowListEntry entry : this.entries) {
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

}
