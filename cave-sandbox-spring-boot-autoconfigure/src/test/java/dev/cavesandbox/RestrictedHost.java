package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Simulates, for real, hosts where network isolation is unavailable, without touching this host:
 * wrapper scripts that stand in for {@code unshare} and run the real binary where the kernel
 * refuses it.
 */
public final class RestrictedHost {

	private RestrictedHost() {
	}

	/**
	 * Write a wrapper that runs the real {@code /usr/bin/unshare} inside a nested user namespace whose
	 * {@code user.max_user_namespaces} is 0, so the kernel answers ENOSPC (see platform-facts.md).
	 * @param directory where to write the wrapper
	 * @return the wrapper, to be used as the unshare path
	 * @throws IOException if it cannot be written
	 */
	public static Path unshareWithNamespaceLimitZero(Path directory) throws IOException {
		Path script = directory.resolve("unshare-limit-zero");
		Files.writeString(script, "#!/bin/sh\n"
				+ "exec /usr/bin/unshare --user --map-root-user /bin/sh -c "
				+ "'echo 0 > /proc/sys/user/max_user_namespaces && exec /usr/bin/unshare \"$@\"' sh \"$@\"\n");
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
		return script;
	}

}
