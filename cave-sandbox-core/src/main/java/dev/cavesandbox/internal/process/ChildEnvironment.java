package dev.cavesandbox.internal.process;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.SandboxSettings;

/**
 * The environment of a child: the baseline ({@code PATH}, {@code HOME} and {@code TMPDIR}
 * set to the working directory, {@code LANG=C.UTF-8}), plus the parent's variables that
 * the settings and the request name, plus the ones they set, and nothing else; and, for
 * an isolated execution, the wrappers' own environment, which holds none of it (the
 * command gets its own in its hand-over frame).
 */
public final class ChildEnvironment {

	/**
	 * The names a command's own servers are reached by on a private loopback, which no
	 * proxy must take.
	 */
	private static final String LOCAL_NAMES = "localhost,127.0.0.1,::1";

	private ChildEnvironment() {
	}

	/**
	 * Build the command's environment.
	 * @param settings the executor's settings (variables passed and set for every
	 * execution)
	 * @param request the request (its own passed and set variables, which win)
	 * @param directory the working directory, the child's {@code HOME} and {@code TMPDIR}
	 * @param parent the parent's environment, normally {@link System#getenv()}
	 * @return the environment, in a new modifiable map
	 */
	public static Map<String, String> of(SandboxSettings settings, ExecutionRequest request, Path directory,
			Map<String, String> parent) {
		Map<String, String> environment = new LinkedHashMap<>();
		environment.put("PATH", SandboxSettings.BASELINE_PATH);
		environment.put("HOME", directory.toString());
		environment.put("TMPDIR", directory.toString());
		environment.put("LANG", "C.UTF-8");
		for (String name : settings.env().pass()) {
			passIfSet(environment, parent, name);
		}
		for (String name : request.passEnvironment()) {
			passIfSet(environment, parent, name);
		}
		environment.putAll(settings.env().set());
		environment.putAll(request.environment());
		return environment;
	}

	private static void passIfSet(Map<String, String> environment, Map<String, String> parent, String name) {
		String value = parent.get(name);
		if (value != null) {
			environment.put(name, value);
		}
	}

	/**
	 * Point the command's HTTP clients at the egress proxy (its bridge in the sandbox):
	 * {@code HTTP_PROXY}, {@code HTTPS_PROXY}, {@code ALL_PROXY} and their lower-case
	 * forms (curl reads only {@code http_proxy} in lower case), replacing the command's
	 * own (no other proxy is reachable), and {@code JAVA_TOOL_OPTIONS} with the JDK's
	 * proxy properties (networking properties of {@code java.net}), appended to the
	 * command's own. {@code NO_PROXY} and {@code no_proxy}: the command's own where it
	 * sets either; else, with a private loopback that was asked for (the command's own
	 * servers), {@code localhost,127.0.0.1,::1}, which the JDK's default
	 * {@code http.nonProxyHosts} also bypasses; else empty, and
	 * {@code -Dhttp.nonProxyHosts=} empty too (the JDK would send {@code localhost}
	 * directly, where nothing listens), so that a name on the allow-list is reached
	 * through the proxy whatever it is.
	 * @param environment the command's environment, changed in place
	 * @param ownLoopback whether the command asked for a private loopback of its own
	 */
	public static void pointAtEgressProxy(Map<String, String> environment, boolean ownLoopback) {
		String host = "127.0.0.1";
		int port = SandboxSettings.Egress.PROXY_PORT;
		String url = "http://" + host + ":" + port;
		Map<String, String> variables = new LinkedHashMap<>();
		for (String name : List.of("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")) {
			variables.put(name, url);
			variables.put(name.toLowerCase(java.util.Locale.ROOT), url);
		}
		String own = environment.containsKey("NO_PROXY") ? environment.get("NO_PROXY") : environment.get("no_proxy");
		String noProxy = (own != null) ? own : (ownLoopback ? LOCAL_NAMES : "");
		variables.put("NO_PROXY", noProxy);
		variables.put("no_proxy", noProxy);
		environment.putAll(variables);
		String properties = "-Dhttp.proxyHost=" + host + " -Dhttp.proxyPort=" + port + " -Dhttps.proxyHost=" + host
				+ " -Dhttps.proxyPort=" + port + (noProxy.isEmpty() ? " -Dhttp.nonProxyHosts=" : "");
		String options = environment.get("JAVA_TOOL_OPTIONS");
		environment.put("JAVA_TOOL_OPTIONS",
				(options == null || options.isBlank()) ? properties : options + " " + properties);
	}

	/**
	 * The environment of the sandbox wrappers (bwrap, setpriv, unshare, the unshare
	 * mechanism's setup shell and mount), which run on the host before the namespaces
	 * close: a baseline {@code PATH} and the launch token, and nothing of the command's.
	 * A variable that steers the dynamic loader or the shell ({@code LD_*},
	 * {@code BASH_ENV}, {@code PATH}, ...) would let a library or program planted by an
	 * earlier execution run there, with the host's network; the command gets its whole
	 * environment in its hand-over frame instead, after the set-up.
	 * @param tokenVariable the name of the launch token's variable
	 * @param token the launch token
	 * @return the environment, in a new modifiable map
	 */
	public static Map<String, String> ofWrappers(String tokenVariable, String token) {
		Map<String, String> environment = new LinkedHashMap<>();
		environment.put("PATH", SandboxSettings.BASELINE_PATH);
		environment.put(tokenVariable, token);
		return environment;
	}

}
