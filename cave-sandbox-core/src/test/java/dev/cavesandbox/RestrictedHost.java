package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Simulates, for real, hosts where network isolation is unavailable, without touching
 * this host: wrapper scripts that stand in for {@code unshare} or {@code bwrap} and run
 * the real binary where the kernel refuses it (see platform-facts.md).
 */
public final class RestrictedHost {

	private static final String LIMIT_ZERO = "echo 0 > /proc/sys/user/max_user_namespaces";

	private static final String NO_CAPABILITIES = "exec /usr/bin/setpriv --inh-caps=-all --ambient-caps=-all "
			+ "--bounding-set=-all --";

	private RestrictedHost() {
	}

	/**
	 * Write a wrapper that runs the real {@code /usr/bin/unshare} inside a nested user
	 * namespace whose {@code user.max_user_namespaces} is 0, so the kernel answers
	 * ENOSPC.
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the unshare path
	 * @throws IOException if it cannot be written
	 */
	public static Path unshareWithNamespaceLimitZero(Path directory) throws IOException {
		return wrapper(directory, "unshare-limit-zero", LIMIT_ZERO + " && exec /usr/bin/unshare");
	}

	/**
	 * Write a wrapper that runs the real {@code /usr/bin/bwrap} where the user namespace
	 * limit is 0.
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the bwrap path
	 * @throws IOException if it cannot be written
	 */
	public static Path bwrapWithNamespaceLimitZero(Path directory) throws IOException {
		return wrapper(directory, "bwrap-limit-zero", LIMIT_ZERO + " && exec /usr/bin/bwrap");
	}

	/**
	 * Write a wrapper that runs the real {@code /usr/bin/unshare} without any capability
	 * (an empty bounding set, as in a locked-down container), so the kernel answers
	 * EPERM.
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the unshare path
	 * @throws IOException if it cannot be written
	 */
	public static Path unshareWithoutCapabilities(Path directory) throws IOException {
		return wrapper(directory, "unshare-no-caps", NO_CAPABILITIES + " /usr/bin/unshare");
	}

	/**
	 * Write a wrapper that runs the real {@code /usr/bin/bwrap} without any capability.
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the bwrap path
	 * @throws IOException if it cannot be written
	 */
	public static Path bwrapWithoutCapabilities(Path directory) throws IOException {
		return wrapper(directory, "bwrap-no-caps", NO_CAPABILITIES + " /usr/bin/bwrap");
	}

	/**
	 * The wrapper of {@link #unshareWithNamespaceLimitZero(Path)}, for the namespaces
	 * mechanism, which runs the same {@code unshare(1)}.
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the unshare path
	 * @throws IOException if it cannot be written
	 */
	public static Path namespacesWithNamespaceLimitZero(Path directory) throws IOException {
		return unshareWithNamespaceLimitZero(directory);
	}

	/**
	 * The wrapper of {@link #unshareWithoutCapabilities(Path)}, for the namespaces
	 * mechanism.
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the unshare path
	 * @throws IOException if it cannot be written
	 */
	public static Path namespacesWithoutCapabilities(Path directory) throws IOException {
		return unshareWithoutCapabilities(directory);
	}

	private static Path wrapper(Path directory, String name, String command) throws IOException {
		Path script = directory.resolve(name);
		Files.writeString(script, "#!/bin/sh\n" + "exec /usr/bin/unshare --user --map-root-user /bin/sh -c '" + command
				+ " \"$@\"' sh \"$@\"\n");
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
		return script;
	}

	/**
	 * Write an executable script.
	 * @param directory where to write it
	 * @param name its file name
	 * @param body the lines after {@code #!/bin/sh}
	 * @return the script
	 * @throws IOException if it cannot be written
	 */
	public static Path script(Path directory, String name, String body) throws IOException {
		Path script = directory.resolve(name);
		Files.writeString(script, "#!/bin/sh\n" + body + "\n");
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
		return script;
	}

}
