package dev.cavesandbox.internal.process;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.SandboxSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The environment of a child: the baseline ({@code PATH}, {@code HOME} and {@code TMPDIR}
 * set to the working directory, {@code LANG=C.UTF-8}), plus the parent's variables that
 * the settings and the request name, plus the ones they set, and nothing else; and, for
 * an isolated execution, the variables that steer the sandbox wrappers moved inside the
 * sandbox through {@code env(1)}.
 */
public final class ChildEnvironment {

	/**
	 * Besides every LD_* variable: what steers the loader, libc or the shell of a
	 * wrapper.
	 */
	private static final Set<String> WRAPPER_STEERING = Set.of("PATH", "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES",
			"HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF",
			"RES_OPTIONS", "TZDIR", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "CDPATH", "PS4");

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
	 * The sandbox wrappers (bwrap, setpriv, unshare, the unshare mechanism's setup shell
	 * and mount) run on the host, before the namespaces close, with the environment of
	 * the process that is spawned. Variables that steer the dynamic loader or the shell
	 * ({@code LD_*}, glibc's list of variables it ignores for setuid programs,
	 * {@code BASH_ENV}, {@code PATH}, ...) would let a library or program planted by an
	 * earlier execution run there, with the host's network. So the wrappers get a
	 * baseline {@code PATH} and none of them, and the command gets them back inside the
	 * sandbox through {@code env(1)} on its command line.
	 * @param argv the command
	 * @param environment the command's environment, changed in place into the wrappers'
	 * @return the command, behind {@code env NAME=VALUE...} if any variable was moved
	 */
	public static List<String> moveInside(List<String> argv, Map<String, String> environment) {
		List<String> assignments = new ArrayList<>();
		environment.entrySet().removeIf((variable) -> {
			if (!steersWrappers(variable.getKey())) {
				return false;
			}
			if (!(variable.getKey().equals("PATH") && variable.getValue().equals(SandboxSettings.BASELINE_PATH))) {
				assignments.add(variable.getKey() + "=" + variable.getValue());
			}
			return true;
		});
		environment.put("PATH", SandboxSettings.BASELINE_PATH);
		if (assignments.isEmpty()) {
			return argv;
		}
		if (argv.get(0).indexOf('=') >= 0) {
			throw new InvalidExecutionRequestException("argv[0] " + argv.get(0)
					+ " contains '=', which env(1) would take " + "for a variable; give it as ./" + argv.get(0));
		}
		List<String> command = new ArrayList<>(assignments.size() + argv.size() + 1);
		command.add("/usr/bin/env");
		command.addAll(assignments);
		command.addAll(argv);
		return command;
	}

	static boolean steersWrappers(String name) {
		return name.startsWith("LD_") || WRAPPER_STEERING.contains(name);
	}

}
