package dev.cavesandbox.internal.egress;

import java.util.Locale;

import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

/**
 * Where a client asks the proxy to connect: the authority of a CONNECT request
 * ({@code host:port}) or of an absolute-form URI ({@code http://host[:port]/path}), with
 * the path to send upstream in origin-form.
 *
 * @param host the host as the client named it, normalized
 * ({@link EgressAllowList#normalizeHost(String)})
 * @param ipv6 whether the host was an IPv6 literal in brackets
 * @param port the port
 * @param authority the authority as the client wrote it (the upstream's {@code Host})
 * @param originForm the path and query of an absolute-form URI, {@code /} when it had
 * none; empty for a CONNECT
 */
public record RequestTarget(String host, boolean ipv6, int port, String authority, String originForm) {

	private static final String HTTP = "http://";

	/**
	 * The target of a CONNECT request.
	 * @param uri the request's URI: {@code host:port} or {@code [IPv6]:port}
	 * @return the target
	 * @throws BadRequestException when it is not an authority with a port
	 */
	static RequestTarget ofConnect(String uri) throws BadRequestException {
		return ofAuthority(uri, -1, "");
	}

	/**
	 * The target of a request in absolute form.
	 * @param uri the request's URI, {@code http://host[:port][/path][?query]}
	 * @return the target
	 * @throws BadRequestException when it is not an absolute-form {@code http} URI
	 */
	static RequestTarget ofAbsoluteForm(String uri) throws BadRequestException {
		if (uri.startsWith("/") || uri.equals("*")) {
			throw new BadRequestException("an origin-form URI (" + uri
					+ "); a proxy request names its destination in absolute form, http://host[:port]/path");
		}
		if (!uri.regionMatches(true, 0, HTTP, 0, HTTP.length())) {
			throw new BadRequestException("not an http:// URI; use CONNECT for https and other protocols");
		}
		int start = HTTP.length();
		int end = start;
		while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
			end++;
		}
		String path = uri.substring(end);
		int fragment = path.indexOf('#');
		if (fragment >= 0) {
			path = path.substring(0, fragment);
		}
		if (path.isEmpty() || path.startsWith("?")) {
			path = "/" + path;
		}
		return ofAuthority(uri.substring(start, end), 80, path);
	}

	private static RequestTarget ofAuthority(String authority, int defaultPort, String originForm)
			throws BadRequestException {
		if (authority.contains("@")) {
			throw new BadRequestException("user information in the authority is not supported");
		}
		String host;
		@Nullable String portText;
		boolean ipv6 = authority.startsWith("[");
		if (ipv6) {
			int close = authority.indexOf(']');
			if (close < 0 || (close + 1 < authority.length() && authority.charAt(close + 1) != ':')) {
				throw new BadRequestException("a malformed IPv6 literal in " + authority);
			}
			host = authority.substring(1, close);
			portText = (close + 1 < authority.length()) ? authority.substring(close + 2) : null;
		}
		else {
			int colon = authority.indexOf(':');
			if (colon >= 0 && colon != authority.lastIndexOf(':')) {
				throw new BadRequestException("an IPv6 literal must be written in brackets");
			}
			host = (colon >= 0) ? authority.substring(0, colon) : authority;
			portText = (colon >= 0) ? authority.substring(colon + 1) : null;
		}
		if (host.isEmpty()) {
			throw new BadRequestException("no host");
		}
		String validCharacters = ipv6 ? "0123456789abcdef:." : "abcdefghijklmnopqrstuvwxyz0123456789-_.";
		if (!host.toLowerCase(Locale.ROOT).chars().allMatch((c) -> validCharacters.indexOf(c) >= 0)) {
			throw new BadRequestException("'" + host + "' is not a host name or IP literal");
		}
		int port = port(portText, defaultPort);
		String normalized = EgressAllowList.normalizeHost(host);
		if (normalized.isEmpty()) {
			throw new BadRequestException("no host");
		}
		return new RequestTarget(normalized, ipv6, port, authority, originForm);
	}

	private static int port(@Nullable String portText, int defaultPort) throws BadRequestException {
		if (portText == null || (portText.isEmpty() && defaultPort > 0)) {
			if (defaultPort < 0) {
				throw new BadRequestException("CONNECT needs host:port");
			}
			return defaultPort;
		}
		int port = portNumber(portText);
		if (port < 0) {
			throw new BadRequestException("the port is not a number from 1 to 65535");
		}
		return port;
	}

	/**
	 * A port as written in an authority or an allow-list entry.
	 * @param text the decimal digits
	 * @return the port, or {@code -1} when the text is not a number from 1 to 65535
	 */
	public static int portNumber(String text) {
		if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch((c) -> c >= '0' && c <= '9')) {
			return -1;
		}
		int port = Integer.parseInt(text);
		return (port >= 1 && port <= 65535) ? port : -1;
	}

	/**
	 * The destination as shown in messages: {@code host:port}, IPv6 in brackets.
	 * @return the destination
	 */
	String display() {
		return (this.ipv6 ? "[" + this.host + "]" : this.host) + ":" + this.port;
	}

	/** A request the proxy does not understand or support. */
	static final class BadRequestException extends Exception {

		BadRequestException(String message) {
			super(message);
		}

	}

}
