package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Real sandboxes with one deliberate defect, for the probe to catch: wrapper scripts that
 * stand in for {@code bwrap} or {@code unshare}, rewrite the production command line
 * (drop an option, keep the capabilities, add an interface inside the new network
 * namespace) and run the real binary. Nothing they do reaches the host: every change
 * happens in the sandbox's own namespaces. The wrappers live outside the hidden
 * directories, since the unshare mechanism runs its binaries again inside the sandbox
 * (see {@link VisibleDirectories}).
 * <p>
 * Each wrapper passes its arguments through a loop that rewrites the options before the
 * first {@code --} (case arms on {@code $a}: {@code continue} drops it, {@code s=1} drops
 * the next one too, assigning {@code a} replaces it) and, after it, the arguments (the
 * options of the launcher's root, for unshare).
 */
final class FaultySandboxes {

	/** One deliberate defect of a sandbox. */
	enum Fault {

		/**
		 * The command runs in the host's namespaces: the wrapper skips the sandbox
		 * altogether.
		 */
		NO_NAMESPACES,

		/**
		 * No new IPC namespace: bwrap without {@code --unshare-ipc}, unshare without
		 * {@code --ipc}.
		 */
		HOST_IPC_NAMESPACE,

		/** No tmpfs over the hidden directories: the host's ones stay visible. */
		HOST_DIRECTORIES_VISIBLE,

		/** The command keeps every capability of its user namespace. */
		CAPABILITIES_KEPT,

		/**
		 * The new network namespace gets an interface besides {@code lo} before the
		 * command runs.
		 */
		EXTRA_INTERFACE

	}

	/**
	 * Adds an interface in the current network namespace: a dummy one where the module is
	 * loaded, else a bridge (built into most kernels; a user namespace cannot load the
	 * dummy module).
	 */
	private static final String ADD_INTERFACE = "/sbin/ip link add cave0 type dummy 2>/dev/null "
			+ "|| /sbin/ip link add cave0 type bridge || exit 1";

	private FaultySandboxes() {
	}

	/**
	 * Write the wrappers that give a mechanism the fault and return settings that use
	 * them.
	 * @param mechanism a Linux mechanism of {@link LinuxMechanisms#ALL}
	 * @param fault the defect
	 * @return settings with the mechanism and the wrappers as its binaries
	 */
	static SandboxSettings.Builder settings(MechanismChoice mechanism, Fault fault) {
		SandboxSettings.Builder settings = faulty(mechanism, fault);
		// Hidden directories are what the host view hides; the system view shows none of
		// the host's directories to begin with.
		return (fault != Fault.HOST_DIRECTORIES_VISIBLE) ? settings
				: settings.filesystemView(SandboxSettings.Filesystem.View.HOST);
	}

	private static SandboxSettings.Builder faulty(MechanismChoice mechanism, Fault fault) {
		Path directory = VisibleDirectories.create("faulty-" + mechanism.name().toLowerCase() + "-");
		try {
			return switch (mechanism) {
				case BWRAP -> withBinary(mechanism, bwrap(directory, fault));
				case UNSHARE -> {
					SandboxSettings.Builder settings = withBinary(mechanism, unshare(directory, fault));
					yield (fault != Fault.CAPABILITIES_KEPT) ? settings
							: settings.setprivPath(setprivKeepingCapabilities(directory));
				}
				// The same unshare(1) as the unshare mechanism, without a mount
				// namespace: what stands in for the hidden directories is the launcher's
				// --no-mount-namespace (socket(AF_UNIX) refused, Landlock), which the
				// wrapper drops from the arguments.
				case NAMESPACES -> withBinary(mechanism,
						(fault != Fault.HOST_DIRECTORIES_VISIBLE) ? unshare(directory, fault) : rewriting(directory,
								"unshare", "/usr/bin/unshare", "", "", "--no-mount-namespace) continue ;;"));
				// The seccomp mechanism runs nothing but the launcher, whose
				// SHA-256 the probe checks: there is no wrapper to give a fault.
				default -> throw new IllegalArgumentException("no faulty wrapper for " + mechanism + " yet: add one");
			};
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Return settings for a mechanism whose own binary (the one named after it) is the
	 * given one.
	 * @param mechanism a Linux mechanism of {@link LinuxMechanisms#ALL}
	 * @param binary the binary in place of {@code bwrap} or {@code unshare} (the launcher
	 * for the seccomp mechanism)
	 * @return the settings
	 */
	static SandboxSettings.Builder withBinary(MechanismChoice mechanism, Path binary) {
		// The faults and refusals stand in for a wrapper that creates the user namespace
		// itself: a root JVM's command user would have the launcher create it first.
		SandboxSettings.Builder settings = SandboxSettings.builder().mechanism(mechanism).commandUser(0);
		return switch (mechanism) {
			case BWRAP -> settings.bwrapPath(binary);
			case UNSHARE, NAMESPACES -> settings.unsharePath(binary);
			// The launcher is the seccomp mechanism's only binary.
			case SECCOMP -> settings.launcherPath(binary);
			default -> throw new IllegalArgumentException("no binary of its own for " + mechanism + " yet: add it");
		};
	}

	private static Path bwrap(Path directory, Fault fault) throws IOException {
		return switch (fault) {
			case NO_NAMESPACES -> RestrictedHost.script(directory, "bwrap",
					"while [ \"$1\" != \"--\" ]; do shift; done; shift; exec \"$@\"");
			case HOST_IPC_NAMESPACE ->
				rewriting(directory, "bwrap", "/usr/bin/bwrap", "", "--unshare-ipc) continue ;;", "");
			case HOST_DIRECTORIES_VISIBLE ->
				rewriting(directory, "bwrap", "/usr/bin/bwrap", "", "--size|--perms|--tmpfs) s=1; continue ;;", "");
			case CAPABILITIES_KEPT ->
				rewriting(directory, "bwrap", "/usr/bin/bwrap", "", "--cap-drop) a=--cap-add ;;", "");
			// bwrap drops every capability before the command: keep the two that adding
			// an interface and dropping them again take, add it, then drop them as the
			// production command line does.
			case EXTRA_INTERFACE -> rewriting(directory, "bwrap", "/usr/bin/bwrap",
					"add='" + ADD_INTERFACE + "\nexec /usr/bin/setpriv --inh-caps=-all --bounding-set=-all -- \"$@\"'",
					"--) o=0; set -- \"$@\" --cap-add CAP_NET_ADMIN --cap-add CAP_SETPCAP -- /bin/sh -c \"$add\" sh; "
							+ "continue ;;",
					"");
		};
	}

	/** The faults of util-linux unshare, whose PID 1 is the launcher's root. */
	private static Path unshare(Path directory, Fault fault) throws IOException {
		return switch (fault) {
			// Past unshare's options and the launcher's root with its options, which must
			// never run on the host: the launcher's exec runs in the host's namespaces.
			case NO_NAMESPACES ->
				RestrictedHost.script(directory, "unshare", "while [ \"$1\" != \"--\" ]; do shift; done; shift; "
						+ "while [ \"$1\" != \"--\" ]; do shift; done; shift; exec \"$@\"");
			case HOST_IPC_NAMESPACE ->
				rewriting(directory, "unshare", "/usr/bin/unshare", "", "--ipc) continue ;;", "");
			// The launcher's root gets no hidden directory to mount a tmpfs over.
			case HOST_DIRECTORIES_VISIBLE ->
				rewriting(directory, "unshare", "/usr/bin/unshare", "", "", "--hide) s=1; continue ;;");
			// The nested user namespace maps the command to root, who holds every
			// capability there.
			case CAPABILITIES_KEPT -> rewriting(directory, "unshare", "/usr/bin/unshare", "", "",
					"--map) m=1 ;;\n*) if [ \"$m\" = 1 ]; then m=0; a=0:0; fi ;;");
			// A shell as PID 1, root of the user namespace that owns the new network
			// namespace, adds the interface and runs the launcher's root in its place.
			case EXTRA_INTERFACE ->
				rewriting(directory, "unshare", "/usr/bin/unshare", "add='" + ADD_INTERFACE + "\nexec \"$@\"'",
						"--) o=0; set -- \"$@\" -- /bin/sh -c \"$add\" sh; continue ;;", "");
		};
	}

	private static Path setprivKeepingCapabilities(Path directory) throws IOException {
		return RestrictedHost.script(directory, "setpriv", """
				if [ "$1" = --inh-caps=-all ]; then
					while [ "$1" != -- ]; do shift; done
					shift
					exec "$@"
				fi
				exec /usr/bin/setpriv "$@"
				""");
	}

	private static Path rewriting(Path directory, String name, String binary, String prelude, String optionArms,
			String argumentArms) throws IOException {
		String loop = """
				o=1 s=0
				for a do
					shift
					if [ $s = 1 ]; then s=0; continue; fi
					if [ $o = 1 ]; then
						case "$a" in
						%s
						--) o=0 ;;
						esac
					else
						case "$a" in
						%s
						esac
					fi
					set -- "$@" "$a"
				done
				exec %s "$@"
				""".formatted(optionArms, argumentArms, binary);
		return RestrictedHost.script(directory, name, prelude + "\n" + loop);
	}

}
