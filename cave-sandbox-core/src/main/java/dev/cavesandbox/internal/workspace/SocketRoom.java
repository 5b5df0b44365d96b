package dev.cavesandbox.internal.workspace;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * How long a path a program's own unix socket beneath its private working directory may
 * have. A pathname socket's address is {@code sun_path}, 108 bytes with the terminating
 * NUL (unix(7)): 107 bytes of path. A private directory's path is its home's (the real
 * path of the work directory and {@code /cave-sandbox-<uid>}), a slash and
 * {@value OwnerLock#NAME_LENGTH} characters; {@code TMPDIR} and {@code HOME} are that
 * path (ChildEnvironment), and programs make their sockets beneath them (Chromium:
 * {@code org.chromium.Chromium.XXXXXX/SingletonSocket}, 44 bytes). With the default work
 * directory {@code /tmp} and a root JVM that path has 29 characters, which leaves 77
 * bytes.
 */
public final class SocketRoom {

	/** The bytes of a pathname socket's path: {@code sun_path} without its NUL. */
	public static final int SOCKET_PATH_BYTES = 107;

	/**
	 * The bytes a socket's path beneath a private directory should have at least; fewer
	 * are warned about at startup.
	 */
	public static final int WANTED_BYTES = 60;

	/** The homes warned about, once each per JVM. */
	private static final Set<Path> WARNED = ConcurrentHashMap.newKeySet();

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(SocketRoom.class);

	private SocketRoom() {
	}

	/**
	 * The length of a private directory's path in a home.
	 * @param home this user's home in the work directory, from {@link PrivateHome#of}
	 * @return its bytes (UTF-8), with the slash and the name
	 */
	public static int directoryBytes(Path home) {
		return home.toString().getBytes(StandardCharsets.UTF_8).length + 1 + OwnerLock.NAME_LENGTH;
	}

	/**
	 * The bytes left for a socket's path beneath a private directory, after the
	 * directory's path and its slash.
	 * @param home this user's home in the work directory
	 * @return {@code 107 - directoryBytes - 1}, negative where none fits
	 */
	public static int bytesLeft(Path home) {
		return SOCKET_PATH_BYTES - directoryBytes(home) - 1;
	}

	/**
	 * The warning for a home whose private directories leave fewer than
	 * {@value #WANTED_BYTES} bytes for a socket's path beneath them.
	 * @param home this user's home in the work directory
	 * @return the warning, or {@code null} if enough is left
	 */
	static @Nullable String warning(Path home) {
		int left = bytesLeft(home);
		if (left >= WANTED_BYTES) {
			return null;
		}
		return "The private working directories in " + home + " have paths of " + directoryBytes(home)
				+ " bytes, which leaves " + Math.max(left, 0) + " bytes for the path of a unix socket that a command "
				+ "makes beneath its working directory (TMPDIR, HOME; sun_path holds " + SOCKET_PATH_BYTES
				+ " bytes, unix(7)): programs that make one there, such as Chromium (a name of 44 bytes beneath TMPDIR), fail "
				+ "with 'path too long' or similar. Fix: set cave.sandbox.work-directory to a directory with a path "
				+ "of at most " + maxWorkDirectoryBytes(home) + " bytes, such as /tmp";
	}

	/**
	 * The longest work directory path (its real path) whose private directories leave
	 * {@value #WANTED_BYTES} bytes: the home adds a slash and its name.
	 */
	private static int maxWorkDirectoryBytes(Path home) {
		int homeName = 1 + home.getFileName().toString().getBytes(StandardCharsets.UTF_8).length;
		return SOCKET_PATH_BYTES - WANTED_BYTES - 1 - 1 - OwnerLock.NAME_LENGTH - homeName;
	}

	/**
	 * Log {@link #warning} where there is one, once per home and JVM; the executor works
	 * regardless, and a program whose socket does not fit fails on its own.
	 * @param home this user's home in the work directory
	 */
	static void warnIfShort(Path home) {
		String warning = warning(home);
		if (warning != null && WARNED.add(home)) {
			logger.warn(warning);
		}
	}

}
