package dev.cavesandbox.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;

/**
 * The one place where the core's neutral texts become texts for a Spring Boot
 * application: the property ({@code cave.sandbox.*}) behind each {@link SandboxSettings}
 * component, and the description and fix of each {@link UnavailabilityCause} in terms of
 * those properties. The core names settings by their component ({@code unsharePath},
 * {@code mechanism none}); the failure analysis, the conditions report and the health and
 * info details use these texts instead.
 */
final class PropertyFixes {

	private static final Map<String, String> PROPERTIES = properties();

	/** The system the texts are for, as the probe reads it. */
	private static final String OS_NAME = System.getProperty("os.name", "");

	private PropertyFixes() {
	}

	private static Map<String, String> properties() {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("mode", "cave.sandbox.mode");
		properties.put("timeout", "cave.sandbox.timeout");
		properties.put("maxOutputBytes", "cave.sandbox.max-output");
		properties.put("maxOutputFileBytes", "cave.sandbox.output-files.max-size");
		properties.put("killGracePeriod", "cave.sandbox.kill-grace-period");
		properties.put("probeTimeout", "cave.sandbox.probe-timeout");
		properties.put("maxConcurrent", "cave.sandbox.max-concurrent");
		properties.put("queueTimeout", "cave.sandbox.queue-timeout");
		properties.put("workDirectory", "cave.sandbox.work-directory");
		properties.put("env.pass", "cave.sandbox.env.pass");
		properties.put("env.set", "cave.sandbox.env.set");
		properties.put("linux.unsharePath", "cave.sandbox.linux.unshare-path");
		properties.put("linux.setprivPath", "cave.sandbox.linux.setpriv-path");
		properties.put("mechanism", "cave.sandbox.mechanism");
		properties.put("loopback", "cave.sandbox.loopback");
		properties.put("readOnlyRoot", "cave.sandbox.read-only-root");
		properties.put("hiddenDirectories", "cave.sandbox.hidden-directories");
		properties.put("filesystem.view", "cave.sandbox.filesystem.view");
		properties.put("filesystem.readablePaths", "cave.sandbox.filesystem.readable-paths");
		properties.put("filesystem.writablePaths", "cave.sandbox.filesystem.writable-paths");
		properties.put("egress.allowedHosts", "cave.sandbox.egress.allowed-hosts");
		properties.put("egress.allowPrivateDestinations", "cave.sandbox.egress.allow-private-destinations");
		properties.put("linux.bwrapPath", "cave.sandbox.linux.bwrap-path");
		properties.put("linux.launcherPath", "cave.sandbox.linux.launcher-path");
		properties.put("linux.userNamespaces", "cave.sandbox.linux.user-namespaces");
		properties.put("linux.commandUser", "cave.sandbox.linux.command-user");
		properties.put("linux.commandUserRange", "cave.sandbox.linux.command-user-range");
		properties.put("macos.sandboxExecPath", "cave.sandbox.macos.sandbox-exec-path");
		properties.put("limits.memory", "cave.sandbox.limits.memory");
		properties.put("limits.processes", "cave.sandbox.limits.processes");
		properties.put("limits.cpuTime", "cave.sandbox.limits.cpu-time");
		properties.put("limits.fileSize", "cave.sandbox.limits.file-size");
		properties.put("limits.openFiles", "cave.sandbox.limits.open-files");
		properties.put("limits.tmpfsSize", "cave.sandbox.limits.tmpfs-size");
		properties.put("warm.size", "cave.sandbox.warm.size");
		properties.put("warm.maxAge", "cave.sandbox.warm.max-age");
		return Map.copyOf(properties);
	}

	/**
	 * Return the property that sets a component of {@link SandboxSettings}.
	 * @param setting the name of the component, with the name of its group if it is in
	 * one, for example {@code linux.unsharePath}
	 * @return the property, for example {@code cave.sandbox.linux.unshare-path}
	 * @throws IllegalArgumentException if no property sets it
	 */
	static String property(String setting) {
		String property = PROPERTIES.get(setting);
		if (property == null) {
			throw new IllegalArgumentException("no property sets the setting '" + setting + "'");
		}
		return property;
	}

	/**
	 * Return a change of a probed setting in property terms.
	 * @param change a change as {@link dev.cavesandbox.ProbedSettings#changesTo} names
	 * it, for example {@code readOnlyRoot true -> false}
	 * @return the change of the property, for example
	 * {@code cave.sandbox.read-only-root true -> false}; a group of settings as
	 * {@code limits} becomes {@code cave.sandbox.limits}
	 */
	static String change(String change) {
		int space = change.indexOf(' ');
		String setting = change.substring(0, space);
		return PROPERTIES.getOrDefault(setting, "cave.sandbox." + setting) + change.substring(space);
	}

	/**
	 * Return the description of a cause, naming properties where the core names settings.
	 * @param cause the cause
	 * @return the description
	 */
	static String description(UnavailabilityCause cause) {
		return description(cause, OS_NAME);
	}

	/**
	 * Return the description of a cause on a system.
	 * @param cause the cause
	 * @param osName the {@code os.name} of the system
	 * @return the description
	 */
	static String description(UnavailabilityCause cause, String osName) {
		return switch (cause) {
			case UNSUPPORTED_OS -> unsupportedDescription(cause, osName);
			case PRIVATE_LOOPBACK_UNAVAILABLE -> property("loopback") + "=true, but the mechanism cannot give the "
					+ "command a private loopback on this host";
			case MECHANISM_DISABLED -> "isolation is switched off by " + property("mechanism") + "=none";
			case WORK_DIRECTORY_UNUSABLE ->
				"the work directory (" + property("workDirectory") + ") cannot hold the sandbox's private directories";
			default -> cause.description();
		};
	}

	/**
	 * Return what an operator of a Spring Boot application can do about a cause, with the
	 * properties to set.
	 * @param cause the cause
	 * @return the fix
	 */
	static String fix(UnavailabilityCause cause) {
		return fix(cause, OS_NAME);
	}

	/**
	 * Return what an operator can do about a cause on a system.
	 * @param cause the cause
	 * @param osName the {@code os.name} of the system
	 * @return the fix
	 */
	static String fix(UnavailabilityCause cause, String osName) {
		return switch (cause) {
			case UNSUPPORTED_OS -> unsupportedFix(osName);
			case BINARY_MISSING -> "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora/RHEL: dnf "
					+ "install bubblewrap) or util-linux (Debian/Ubuntu: apt-get install util-linux; Alpine: apk add "
					+ "util-linux-misc setpriv), or point " + binaryProperties() + " (macOS: "
					+ property("macos.sandboxExecPath") + ") at the binaries";
			case BINARY_NOT_EXECUTABLE -> "make the binary executable for the user that runs the JVM (chmod a+x), or "
					+ "point " + binaryProperties() + " at one that is";
			case LAUNCHER_UNAVAILABLE -> "if " + property("workDirectory")
					+ " is mounted noexec or read-only, copy the "
					+ "launcher from the cave-sandbox-core jar (dev/cavesandbox/launcher/linux-<arch>/cave-sandbox-launcher; "
					+ "its SHA-256 is in launcher.properties beside it and in the detail) to an executable filesystem, "
					+ "make it executable and set " + property("linux.launcherPath") + " to it, or set "
					+ property("workDirectory") + " to a directory that is writable and executable; if "
					+ property("linux.launcherPath") + " is set, point it at an unmodified copy of this jar's build; "
					+ "if the jar has no build for this architecture, build cave-sandbox-core on that architecture";
			case WORK_DIRECTORY_UNUSABLE -> "free space or inodes on its file system, or mount a writable volume (for "
					+ "example a Kubernetes emptyDir) at java.io.tmpdir or set " + property("workDirectory")
					+ " to a writable directory; if it is mounted noexec, set " + property("linux.launcherPath")
					+ " to an executable copy of the launcher or choose a work directory that allows execution";
			case MOUNT_REFUSED -> "with " + property("mechanism") + "=auto the mechanisms without a mount namespace "
					+ "(namespaces, seccomp) are tried next; to keep the mount namespace, allow mounts in user "
					+ "namespaces (containerd/Kubernetes: an AppArmor profile that allows mount, or the container's "
					+ "securityContext.appArmorProfile type Unconfined), and check that every directory of "
					+ property("hiddenDirectories") + " exists and is a plain directory";
			case KERNEL_REFUSED -> "with " + property("mechanism") + "=auto the seccomp mechanism, which needs no "
					+ "namespace, is tried next; to get namespaces, enable unprivileged user namespaces (sysctl -w "
					+ "kernel.unprivileged_userns_clone=1 on Debian), or run the container with a seccomp profile that "
					+ "allows unshare and clone with namespace flags";
			case NESTING_FORBIDDEN -> "with " + property("mechanism") + "=auto the seccomp mechanism, which needs no "
					+ "namespace, is tried next; or let the outer sandbox allow nested user namespaces (drop "
					+ "--disable-userns; raise user.max_user_namespaces inside it)";
			case PRIVATE_LOOPBACK_UNAVAILABLE -> "set " + property("mechanism")
					+ " to a mechanism with a network namespace (bwrap, unshare or namespaces: install bubblewrap, or "
					+ "allow user namespaces), or set " + property("loopback")
					+ "=false; the seccomp mechanism and macOS cannot isolate a loopback";
			case MECHANISM_DISABLED -> "set " + property("mechanism")
					+ "=auto (or bwrap, unshare, namespaces, seccomp, sandbox-exec) to isolate commands";
			case NESTED_SANDBOX_REFUSED -> "run the JVM outside the App Sandbox and outside any tool that wraps its "
					+ "children in sandbox-exec; or, if that outer sandbox already denies the network, use "
					+ property("mode") + "=fallback";
			case PROBE_TIMEOUT -> "check that the host is not overloaded, or raise " + property("probeTimeout");
			// These fixes name no setting: the core's text is the whole fix.
			case NAMESPACE_LIMIT, USER_NAMESPACES_UNSUPPORTED, UID_MAP_REFUSED, SECCOMP_UNAVAILABLE,
					LANDLOCK_UNAVAILABLE, NOT_VERIFIED, UNKNOWN ->
				cause.fix();
		};
	}

	/**
	 * On Linux and macOS only a mechanism of the other system is unsupported: say so, not
	 * what Windows lacks.
	 */
	private static String unsupportedDescription(UnavailabilityCause cause, String osName) {
		if (isLinux(osName)) {
			return property("mechanism") + "=sandbox-exec is macOS's mechanism, and this system is Linux";
		}
		if (isMacos(osName)) {
			return property("mechanism") + " names a Linux mechanism, and this system is macOS";
		}
		return cause.description();
	}

	private static String unsupportedFix(String osName) {
		if (isLinux(osName)) {
			return "set " + property("mechanism")
					+ "=auto, or one of Linux's mechanisms: bwrap, unshare, namespaces or seccomp";
		}
		if (isMacos(osName)) {
			return "set " + property("mechanism") + "=auto or sandbox-exec, macOS's mechanism";
		}
		return "run on Linux (bubblewrap or util-linux unshare) or macOS (sandbox-exec), with " + property("mechanism")
				+ "=auto or a mechanism of that system; on Windows run the JVM in WSL2 or a Linux container; or use "
				+ "a container or VM as the network boundary";
	}

	private static boolean isLinux(String osName) {
		return osName.toLowerCase(Locale.ROOT).startsWith("linux");
	}

	private static boolean isMacos(String osName) {
		String os = osName.toLowerCase(Locale.ROOT);
		return os.startsWith("mac") || os.startsWith("darwin");
	}

	private static String binaryProperties() {
		return property("linux.bwrapPath") + " / unshare-path / setpriv-path";
	}

}
