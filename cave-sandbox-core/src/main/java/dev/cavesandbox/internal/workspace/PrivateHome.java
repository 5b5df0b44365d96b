package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * This JVM's user's home in a work directory, {@code <workDirectory>/cave-sandbox-<uid>}:
 * where the private working directories ({@link PrivateDirectories}), the owner lock
 * files ({@link OwnerLock}) and the extracted launcher live. One per user, not per JVM,
 * so that one JVM's orphan sweep finds another's directories.
 * <ul>
 * <li><strong>Mode 0700</strong>, owned by this JVM's user: a root JVM's command is
 * really root, and what it makes setuid in its directory must stay unreachable by other
 * local users of a shared work directory ({@code /tmp}). With a command user of the
 * seccomp mechanism ({@code cave.sandbox.linux.command-user}) it is 0711
 * ({@link #makeSearchable}): others may pass through, not list it.</li>
 * <li><strong>Already there</strong> (its name is predictable): used only if it is a
 * directory, not a link, this user's, without group or other permission; anything else is
 * refused with an {@link IOException} naming it (the executor's first execution fails
 * with a {@code SandboxLaunchException}).</li>
 * <li><strong>Opened to others</strong> (a command of a mechanism without a mount
 * namespace can {@code chmod 755 ..}; Landlock does not cover metadata): checked before
 * every execution (one {@code lstat}) and repaired to 0700 with a warning, unless another
 * user put an entry in it meanwhile: then refused, naming the entry, until it is
 * gone.</li>
 * </ul>
 * docs/threat-model.md says what is left.
 */
public final class PrivateHome {

	/** The prefix of every name in a work directory and a home. */
	static final String PREFIX = "cave-sandbox-";

	/**
	 * Every home this JVM has used, in any work directory: no execution's working
	 * directory may contain one or lie in one (see {@link #touchedBy}).
	 */
	private static final Set<Path> KNOWN_HOMES = ConcurrentHashMap.newKeySet();

	static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	/**
	 * What opens a home to others. Search permission for others alone does not: a command
	 * user of the seccomp mechanism needs it, and without read permission nobody can list
	 * the randomly named directories, each mode 0700 or 0770 with the command user's
	 * group.
	 */
	private static final Set<PosixFilePermission> GROUP_OR_OTHER = EnumSet.of(PosixFilePermission.GROUP_READ,
			PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
			PosixFilePermission.OTHERS_WRITE);

	private static final Set<PosixFilePermission> SEARCHABLE = PosixFilePermissions.fromString("rwx-----x");

	/**
	 * Homes refused after a repair because another user had put an entry in them: checked
	 * again before every execution, although their mode is owner-only again, until the
	 * entry is gone.
	 */
	private static final Set<Path> REFUSED_HOMES = ConcurrentHashMap.newKeySet();

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(PrivateHome.class);

	/** This JVM's uid, once known. */
	private static volatile @Nullable Integer uid;

	private PrivateHome() {
	}

	/**
	 * This JVM's user's home in a work directory, created if it is not there, checked if
	 * it is, as the class comment describes.
	 * @param workDirectory the work directory
	 * @return {@code <workDirectory>/cave-sandbox-<uid>}
	 * @throws IOException if it cannot be created, or is there but is not this user's
	 * alone
	 */
	public static Path of(Path workDirectory) throws IOException {
		int own = uid(workDirectory);
		Path home = workDirectory.resolve(PREFIX + own);
		KNOWN_HOMES.add(home.toAbsolutePath().normalize());
		try {
			Files.createDirectory(home, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
		}
		catch (FileAlreadyExistsException ex) {
			// checked below, like a new one
		}
		check(home, own);
		return home;
	}

	/**
	 * Check a home again before an execution (one {@code lstat}), repairing one opened to
	 * others, as {@link #of} does.
	 * @param home a home from {@link #of}
	 * @param workDirectory its work directory
	 * @throws IOException if it is not this user's alone and cannot be made so
	 */
	static void checkAgain(Path home, Path workDirectory) throws IOException {
		check(home, uid(workDirectory));
	}

	/**
	 * Return whether a directory is, contains or lies in a home of private directories
	 * (and of the launcher) that this JVM has used, or lies in any directory named like
	 * this user's home (another JVM's, in another work directory).
	 * @param directory a real path
	 * @return the home it touches, or {@code null}
	 */
	public static @Nullable Path touchedBy(Path directory) {
		for (Path known : KNOWN_HOMES) {
			Path home;
			try {
				home = known.toRealPath();
			}
			catch (IOException ex) {
				continue;
			}
			if (home.startsWith(directory) || directory.startsWith(home)) {
				return home;
			}
			for (Path part = directory; part != null; part = part.getParent()) {
				if (home.getFileName().equals(part.getFileName())) {
					return part;
				}
			}
		}
		return null;
	}

	/**
	 * Check a home of this user's private directories, before its first use and before
	 * every execution: it must be a directory (not a symbolic link), owned by this JVM's
	 * user, without group or other permissions. One that is this user's real directory
	 * but open to others is repaired, see {@link #repair}; anything else is refused.
	 * @param home the home
	 * @param own this JVM's uid
	 * @throws IOException if it is not this user's alone and cannot be made so
	 */
	private static void check(Path home, int own) throws IOException {
		Map<String, Object> attributes = Files.readAttributes(home,
				"unix:uid,permissions,fileKey,isDirectory,isSymbolicLink", LinkOption.NOFOLLOW_LINKS);
		int owner = (Integer) attributes.get("uid");
		boolean directory = (Boolean) attributes.get("isDirectory");
		if (!directory || owner != own) {
			throw new IOException(refusal(home, own, ((Boolean) attributes.get("isSymbolicLink")) ? "is a symbolic link"
					: !directory ? "is not a directory" : "is owned by uid " + owner));
		}
		@SuppressWarnings("unchecked")
		Set<PosixFilePermission> permissions = (Set<PosixFilePermission>) attributes.get("permissions");
		Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
		open.addAll(permissions);
		open.retainAll(GROUP_OR_OTHER);
		if (!open.isEmpty() || REFUSED_HOMES.contains(home.toAbsolutePath().normalize())) {
			repair(home, own, attributes.get("fileKey"), permissions, !open.isEmpty());
		}
	}

	/**
	 * Make a home that is this user's real directory but open to others owner-only again,
	 * in one place: it is opened without following a symbolic link (through its parent,
	 * {@code O_NOFOLLOW}) and must be the directory that was checked (the same file key,
	 * before and after); its mode is set to 0700 through that descriptor; then no entry
	 * directly in it may belong to another user, who could have put it there while it was
	 * open. Where one does, the home is refused, naming the entry, and checked again
	 * before every later execution of this JVM, until the entry is gone. A repair is
	 * logged as a warning that names the directory and the mode it had.
	 */
	private static void repair(Path home, int own, @Nullable Object fileKey, Set<PosixFilePermission> found,
			boolean open) throws IOException {
		Path key = home.toAbsolutePath().normalize();
		String mode = PosixFilePermissions.toString(found);
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(key.getParent())) {
			if (fileKey == null || !(parent instanceof SecureDirectoryStream<Path> secureParent)) {
				throw new IOException(refusal(home, own, "is open to others (" + mode + ") and cannot be repaired "
						+ "without following links on this platform"));
			}
			try (SecureDirectoryStream<Path> opened = secureParent.newDirectoryStream(key.getFileName(),
					LinkOption.NOFOLLOW_LINKS)) {
				PosixFileAttributeView view = opened.getFileAttributeView(PosixFileAttributeView.class);
				PosixFileAttributes attributes = view.readAttributes();
				if (!attributes.isDirectory() || !fileKey.equals(attributes.fileKey())) {
					throw new IOException(refusal(home, own, "was replaced while it was checked"));
				}
				if (open) {
					view.setPermissions(OWNER_ONLY);
				}
				refuseAnotherUsersEntry(home, own, opened, attributes.owner(), open ? " (" + mode + ")" : "");
			}
		}
		catch (FileSystemException ex) {
			throw new IOException(refusal(home, own,
					(open ? "is open to others (" + mode + ") and cannot be repaired: " : "cannot be checked again: ")
							+ ex),
					ex);
		}
		REFUSED_HOMES.remove(key);
		if (!open) {
			return;
		}
		BasicFileAttributes after = Files.readAttributes(home, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
		if (!fileKey.equals(after.fileKey())) {
			throw new IOException(refusal(home, own, "was replaced while it was repaired"));
		}
		logger.warn("Repaired {}, the home of uid {}'s private directories: it was open to others ({}), now {}; "
				+ "other local users could reach the private directories while it was. A command of a mechanism without "
				+ "a mount namespace can change the mode of its directory's parent (Landlock does not cover metadata)",
				home, own, mode, PosixFilePermissions.toString(OWNER_ONLY));
	}

	/**
	 * Refuse an opened home, and remember it as refused, if an entry directly in it
	 * belongs to another user than its owner.
	 * @param mode the mode it had, as {@code " (rwxr-xr-x)"}, or empty if it was not open
	 */
	private static void refuseAnotherUsersEntry(Path home, int own, SecureDirectoryStream<Path> opened,
			UserPrincipal homeOwner, String mode) throws IOException {
		Path key = home.toAbsolutePath().normalize();
		for (Path entry : opened) {
			UserPrincipal owner = ownerIfPresent(opened, entry.getFileName());
			if (owner != null && !owner.equals(homeOwner)) {
				REFUSED_HOMES.add(key);
				throw new IOException(refusal(home, own, "was open to others" + mode + " and holds "
						+ key.resolve(entry.getFileName()) + ", owned by " + owner.getName() + " (remove that entry)"));
			}
		}
	}

	/**
	 * Give others search permission on a checked home (mode 0711), through a descriptor
	 * opened without following a link, where it lacks it: for a command user of the
	 * seccomp mechanism, another uid of the host, which must reach its directory by its
	 * path ({@code TMPDIR}, {@code HOME}), and the preload library extracted in the home.
	 * @param home the home
	 * @throws IOException if it cannot be opened without following a link or changed
	 */
	public static void makeSearchable(Path home) throws IOException {
		Path key = home.toAbsolutePath().normalize();
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(key.getParent())) {
			if (!(parent instanceof SecureDirectoryStream<Path> secureParent)) {
				throw new IOException(
						"cannot open " + home + " for the command user without following links on this platform");
			}
			try (SecureDirectoryStream<Path> opened = secureParent.newDirectoryStream(key.getFileName(),
					LinkOption.NOFOLLOW_LINKS)) {
				PosixFileAttributeView view = opened.getFileAttributeView(PosixFileAttributeView.class);
				if (!view.readAttributes().permissions().contains(PosixFilePermission.OTHERS_EXECUTE)) {
					view.setPermissions(SEARCHABLE);
				}
			}
		}
	}

	/**
	 * The owner of an entry of an opened home, or {@code null} if it is gone: this JVM's
	 * cleaner deletes released directories while a home is repaired, and an entry that is
	 * no longer there cannot be used to reach anything.
	 */
	private static @Nullable UserPrincipal ownerIfPresent(SecureDirectoryStream<Path> opened, Path name)
			throws IOException {
		try {
			return opened.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.readAttributes()
				.owner();
		}
		catch (NoSuchFileException ex) {
			return null;
		}
	}

	private static String refusal(Path home, int own, String what) {
		return "refusing " + home + " as the home of uid " + own + "'s private directories: it " + what
				+ "; another user may have created or opened it to reach them. Remove it, or choose a work directory"
				+ " that only this user can write";
	}

	/** The uid that owns what this JVM creates: a new file's owner, asked once. */
	private static int uid(Path workDirectory) throws IOException {
		Integer known = uid;
		if (known == null) {
			Path probe = Files.createTempFile(workDirectory, PREFIX + "uid-", null);
			try {
				known = (Integer) Files.getAttribute(probe, "unix:uid", LinkOption.NOFOLLOW_LINKS);
			}
			finally {
				Files.deleteIfExists(probe);
			}
			uid = known;
		}
		return known;
	}

}
