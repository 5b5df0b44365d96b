package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import dev.cavesandbox.internal.launcher.LauncherInstallation.UnavailableException;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.workspace.PrivateHome;

/**
 * The preload library of the mechanisms without a mount namespace, {@value #LIBRARY}
 * ({@code src/main/c/shm-preload.c}): it keeps POSIX shared memory and named semaphores
 * ({@code shm_open(3)}, {@code sem_open(3)}) in the directory that
 * {@value #DIRECTORY_VARIABLE} names instead of the host's {@code /dev/shm}, which
 * Landlock refuses there. Built beside the launcher, with its SHA-256 in
 * {@code launcher.properties} ({@value #SHA256_PROPERTY}); extracted into this user's
 * home in the work directory as {@code preload-<first 16 hex digits>/}{@value #LIBRARY},
 * mode {@code r--r--r--} in a directory of mode {@code rwxr-xr-x} (a command user, a uid
 * of its own on the seccomp mechanism, must read it: the dynamic loader opens it in each
 * of the command's processes; it is the jar's, nothing secret), verified once per work
 * directory and checked unchanged before each spawn, like the launcher.
 */
public final class SharedMemoryPreload {

	/** The library's file name. */
	public static final String LIBRARY = "libcave-shm.so";

	/**
	 * The variable that names the execution's directory of objects, read by the library.
	 */
	public static final String DIRECTORY_VARIABLE = "CAVE_SANDBOX_SHM";

	/**
	 * The variable in which the executor hands the library to the launcher, which makes
	 * it the command's {@code LD_PRELOAD} just before execve(2) (launcher.h
	 * {@code PRELOAD_VARIABLE}): no wrapper loads it, and the command needs no
	 * {@code env(1)} step.
	 */
	public static final String LAUNCHER_VARIABLE = "CAVE_SANDBOX_PRELOAD";

	static final String SHA256_PROPERTY = "shm-preload.sha256";

	private static final SharedMemoryPreload SHARED = new SharedMemoryPreload(
			LauncherBuild.platform(System.getProperty("os.arch", "")));

	private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

	private static final Set<PosixFilePermission> DIRECTORY_MODE = PosixFilePermissions.fromString("rwxr-xr-x");

	private static final Set<PosixFilePermission> LIBRARY_MODE = PosixFilePermissions.fromString("r--r--r--");

	private final String platform;

	/** The verified library per work directory, and what it was when verified. */
	private final Map<String, Path> verified = new ConcurrentHashMap<>();

	private final Map<Path, FileIdentity> identities = new ConcurrentHashMap<>();

	SharedMemoryPreload(String platform) {
		this.platform = platform;
	}

	/**
	 * Return the installation of this JVM.
	 * @return the installation
	 */
	public static SharedMemoryPreload shared() {
		return SHARED;
	}

	/**
	 * Whether a mechanism leaves {@code /dev/shm} the host's, so that its commands get
	 * the library and a directory of objects of their own: the Linux mechanisms without a
	 * mount namespace ({@code namespaces}, {@code seccomp}).
	 * @param mechanism the mechanism
	 * @return whether its commands need the library
	 */
	public static boolean neededBy(SandboxMechanism mechanism) {
		return mechanism.launcher() != null && !mechanism.namespaces().contains(LinuxNamespace.MOUNT);
	}

	/**
	 * Return the library extracted into the work directory, verified, and checked
	 * unchanged since it was: a copy that changed (a command that could write it, where
	 * Landlock is missing) is extracted again.
	 * @param workDirectory the work directory
	 * @return the library's real path
	 * @throws UnavailableException if the jar has no library for this architecture, or it
	 * cannot be extracted (the message says why)
	 */
	public Path resolve(Path workDirectory) throws UnavailableException {
		String key = workDirectory.toAbsolutePath().normalize().toString();
		Path known = this.verified.get(key);
		if (known != null && unchanged(known)) {
			return known;
		}
		synchronized (this) {
			String sha256 = sha256();
			Path library = extract(workDirectory, sha256);
			this.identities.put(library, FileIdentity.of(library));
			this.verified.put(key, library);
			return library;
		}
	}

	/** The library's SHA-256, as the jar's {@code launcher.properties} records it. */
	private String sha256() throws UnavailableException {
		String directory = LauncherBuild.RESOURCE_ROOT + this.platform + "/";
		Properties properties = new Properties();
		try (InputStream in = SharedMemoryPreload.class.getResourceAsStream(directory + LauncherBuild.PROPERTIES)) {
			if (in == null || SharedMemoryPreload.class.getResource(directory + LIBRARY) == null) {
				throw new UnavailableException(
						"no build of " + LIBRARY + " for architecture " + this.platform + ": the jar has no "
								+ directory.substring(1) + LIBRARY + "; build cave-sandbox-core on that architecture");
			}
			properties.load(in);
		}
		catch (IOException ex) {
			throw new UnavailableException(
					"cannot read " + directory.substring(1) + LauncherBuild.PROPERTIES + " from the jar: " + ex);
		}
		String sha256 = properties.getProperty(SHA256_PROPERTY, "");
		if (!SHA256.matcher(sha256).matches()) {
			throw new UnavailableException(directory.substring(1) + LauncherBuild.PROPERTIES
					+ " in the jar records no SHA-256 of " + LIBRARY + ": " + properties);
		}
		return sha256;
	}

	/**
	 * Extract the library unless an intact copy is there: written under a temporary name,
	 * verified, then renamed over the final name in one step.
	 */
	private Path extract(Path workDirectory, String sha256) throws UnavailableException {
		Path library = null;
		Path temporary = null;
		try {
			Path directory = PrivateHome.of(workDirectory).resolve("preload-" + sha256.substring(0, 16));
			try {
				Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(DIRECTORY_MODE));
			}
			catch (FileAlreadyExistsException ex) {
				// checked below, like a new one
			}
			if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
				throw new IOException(directory + " is not a directory");
			}
			// The umask may have taken the others' bits away.
			Files.setPosixFilePermissions(directory, DIRECTORY_MODE);
			library = directory.toRealPath().resolve(LIBRARY);
			if (isIntact(library, sha256)) {
				return library;
			}
			temporary = Files.createTempFile(directory, "." + LIBRARY + "-", ".tmp");
			try (InputStream in = SharedMemoryPreload.class
				.getResourceAsStream(LauncherBuild.RESOURCE_ROOT + this.platform + "/" + LIBRARY);
					OutputStream out = Files.newOutputStream(temporary, StandardOpenOption.WRITE,
							StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.SYNC)) {
				if (in == null) {
					throw new IOException("the jar has no " + LIBRARY);
				}
				in.transferTo(out);
			}
			Files.setPosixFilePermissions(temporary, LIBRARY_MODE);
			String written = LauncherInstallation.sha256(temporary);
			if (!written.equals(sha256)) {
				throw new UnavailableException(
						"the " + LIBRARY + " extracted from the jar to " + temporary + " has SHA-256 " + written
								+ ", but launcher.properties records " + sha256 + ": the jar is damaged");
			}
			Files.move(temporary, library, StandardCopyOption.ATOMIC_MOVE);
			return library;
		}
		catch (IOException ex) {
			throw new UnavailableException("cannot extract " + LIBRARY + " into the work directory " + workDirectory
					+ " (workDirectory): " + ex + "; choose a work directory that is writable");
		}
		finally {
			if (temporary != null) {
				try {
					Files.deleteIfExists(temporary);
				}
				catch (IOException ex) {
					// the next extraction writes another temporary file
				}
			}
		}
	}

	private boolean unchanged(Path library) {
		try {
			return FileIdentity.of(library).equals(this.identities.get(library));
		}
		catch (UnavailableException ex) {
			return false;
		}
	}

	private static boolean isIntact(Path library, String sha256) {
		try {
			return Files.isRegularFile(library, LinkOption.NOFOLLOW_LINKS)
					&& Files.getPosixFilePermissions(library, LinkOption.NOFOLLOW_LINKS).equals(LIBRARY_MODE)
					&& LauncherInstallation.sha256(library).equals(sha256);
		}
		catch (IOException | UnavailableException ex) {
			return false;
		}
	}

}
