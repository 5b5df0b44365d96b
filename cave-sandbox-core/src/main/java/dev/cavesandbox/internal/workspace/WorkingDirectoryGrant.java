package dev.cavesandbox.internal.workspace;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * A working directory's group handed to a command user for one execution, and taken back.
 * On the seccomp mechanism a root JVM's command runs as a uid of the host without any
 * capability ({@code cave.sandbox.linux.command-user}), so it could not write the JVM's
 * directory (owned by root, mode 0700): for the execution the directory's group becomes
 * the command user's gid, with read, write and search permission for the group; then the
 * group and mode it had are put back (its set-group-ID and sticky bits too, which are off
 * during the execution). The owner stays root, so the command cannot change the
 * directory's mode or hand it on. What the command creates in it stays the command
 * user's.
 * <p>
 * The directory is reached from {@code /} one component at a time, each opened without
 * following a symbolic link ({@link SecureDirectoryStream}, {@code O_NOFOLLOW}), and
 * changed through the descriptor of the directory itself ({@code fchown},
 * {@code fchmod}): a component swapped for a link after the executor checked the path
 * makes the grant fail instead of giving the group another directory. The directory's
 * descriptor stays open until the grant is taken back through it, so that a path swapped
 * meanwhile can neither keep the group on the directory nor move it to another one.
 * <p>
 * Executions that overlap in one directory (a request's working directory used by several
 * at once) share one grant: the first saves the group and mode, the last to end puts them
 * back; the directory is known by its device and inode
 * ({@link java.nio.file.attribute.BasicFileAttributes#fileKey()}), which cannot be reused
 * while a grant holds it open. This holds within one JVM: grants of two JVMs on one
 * directory do not know each other.
 */
public final class WorkingDirectoryGrant implements Closeable {

	private static final Set<PosixFilePermission> GROUP_ALL = EnumSet.of(PosixFilePermission.GROUP_READ,
			PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);

	/** The directories granted now, by file key, guarded by itself. */
	private static final Map<Object, Shared> GRANTED = new HashMap<>();

	private final SecureDirectoryStream<Path> opened;

	private final Object key;

	private WorkingDirectoryGrant(SecureDirectoryStream<Path> opened, Object key) {
		this.opened = opened;
		this.key = key;
	}

	/**
	 * Give the directory's group to a gid, with read, write and search permission, until
	 * {@link #close()}.
	 * @param directory the directory, an absolute real path
	 * @param gid the command user's gid
	 * @return the grant, to be closed after the execution
	 * @throws IOException if the directory cannot be reached without following a link or
	 * cannot be changed, or if it is granted to another gid at the moment
	 */
	public static WorkingDirectoryGrant grant(Path directory, long gid) throws IOException {
		GroupPrincipal commandGroup = FileSystems.getDefault()
			.getUserPrincipalLookupService()
			.lookupPrincipalByGroupName(String.valueOf(gid));
		SecureDirectoryStream<Path> opened = open(directory);
		try {
			PosixFileAttributeView view = opened.getFileAttributeView(PosixFileAttributeView.class);
			synchronized (GRANTED) {
				PosixFileAttributes before = view.readAttributes();
				Object key = before.fileKey();
				if (key == null) {
					throw new IOException("cannot tell " + directory + " apart from other directories (no file key)");
				}
				Shared shared = GRANTED.get(key);
				if (shared == null) {
					shared = new Shared(directory, key, before.group(), Set.copyOf(before.permissions()),
							specialBits(directory, key), commandGroup);
				}
				else if (!shared.granted.equals(commandGroup)) {
					throw new IOException(directory + " is given to the group " + shared.granted.getName()
							+ " for another execution at the moment");
				}
				Set<PosixFilePermission> granted = EnumSet.copyOf(shared.permissions);
				granted.addAll(GROUP_ALL);
				try {
					view.setGroup(commandGroup);
					view.setPermissions(granted);
				}
				catch (IOException | RuntimeException ex) {
					if (shared.users == 0) {
						restore(view, shared);
					}
					throw ex;
				}
				shared.users++;
				GRANTED.put(key, shared);
				return new WorkingDirectoryGrant(opened, key);
			}
		}
		catch (IOException | RuntimeException ex) {
			opened.close();
			throw ex;
		}
	}

	/**
	 * Put the group and mode back, through the directory's own descriptor, and close it;
	 * where other executions in the directory still hold a grant, leave that to the last
	 * of them.
	 * @throws IOException if they cannot be changed
	 */
	@Override
	public void close() throws IOException {
		try (SecureDirectoryStream<Path> directory = this.opened) {
			synchronized (GRANTED) {
				Shared shared = GRANTED.get(this.key);
				if (shared == null) {
					return;
				}
				if (--shared.users > 0) {
					return;
				}
				GRANTED.remove(this.key);
				restore(directory.getFileAttributeView(PosixFileAttributeView.class), shared);
			}
		}
	}

	private static void restore(PosixFileAttributeView view, Shared shared) throws IOException {
		view.setPermissions(shared.permissions);
		view.setGroup(shared.group);
		if (shared.special != 0) {
			// PosixFilePermission has no set-user-ID, set-group-ID or sticky bit, and a
			// SecureDirectoryStream offers no other view: the whole mode goes back by the
			// path (its last component not followed), once the path is shown to still
			// name the directory. The command, which can write the directory but not its
			// parent, cannot swap it.
			if (!shared.key.equals(fileKey(shared.directory))) {
				throw new IOException(shared.directory + " was replaced during the execution: its set-user-ID, "
						+ "set-group-ID or sticky bit (" + Integer.toOctalString(shared.special)
						+ ") was not put back");
			}
			int mode = (Integer) Files.getAttribute(shared.directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
			Files.setAttribute(shared.directory, "unix:mode", (mode & 0777) | shared.special,
					LinkOption.NOFOLLOW_LINKS);
		}
	}

	/**
	 * The set-user-ID, set-group-ID and sticky bits of a directory (which the nine
	 * permission bits of a grant would drop), read by its path once the path is shown to
	 * name the directory already opened.
	 */
	private static int specialBits(Path directory, Object key) throws IOException {
		int mode = (Integer) Files.getAttribute(directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
		if (!key.equals(fileKey(directory))) {
			// The same refusal as a link met on the way: the path was swapped meanwhile.
			throw new IOException("cannot open " + directory + " without following symbolic links (a component was "
					+ "swapped while it was opened)");
		}
		return mode & 07000;
	}

	private static @Nullable Object fileKey(Path directory) throws IOException {
		return Files.readAttributes(directory, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
	}

	/**
	 * What the first grant of a directory found there, and how many grants hold it.
	 */
	private static final class Shared {

		private final Path directory;

		private final Object key;

		private final GroupPrincipal group;

		private final Set<PosixFilePermission> permissions;

		/** Set-user-ID, set-group-ID and sticky bits, as in {@code st_mode}. */
		private final int special;

		private final GroupPrincipal granted;

		private int users;

		Shared(Path directory, Object key, GroupPrincipal group, Set<PosixFilePermission> permissions, int special,
				GroupPrincipal granted) {
			this.directory = directory;
			this.key = key;
			this.group = group;
			this.permissions = permissions;
			this.special = special;
			this.granted = granted;
		}

	}

	/**
	 * The first directory above the given one that a uid (with the same gid, and no
	 * supplementary group) may not pass through: the command user must reach its working
	 * directory by its path ({@code TMPDIR}; an interpreter makes its script's path
	 * absolute), and the grant covers only the directory itself.
	 * @param directory the directory, an absolute real path
	 * @param uid the command user
	 * @return the ancestor it cannot pass, or {@code null}
	 * @throws IOException if an ancestor cannot be read
	 */
	public static @Nullable Path unpassableAncestor(Path directory, long uid) throws IOException {
		return unpassableAncestor(directory, uid, uid);
	}

	/**
	 * The first directory above the given one that a uid with a gid (and no supplementary
	 * group) may not pass through, by the modes, owners and groups the directories have
	 * now.
	 * @param directory the directory, an absolute real path
	 * @param uid the uid
	 * @param gid its gid
	 * @return the ancestor it cannot pass, or {@code null}
	 * @throws IOException if an ancestor cannot be read
	 */
	public static @Nullable Path unpassableAncestor(Path directory, long uid, long gid) throws IOException {
		for (Path ancestor = directory.getParent(); ancestor != null; ancestor = ancestor.getParent()) {
			Map<String, Object> attributes = Files.readAttributes(ancestor, "unix:mode,uid,gid",
					LinkOption.NOFOLLOW_LINKS);
			int mode = (Integer) attributes.get("mode");
			int search = ((Integer) attributes.get("uid") == uid) ? 0100
					: ((Integer) attributes.get("gid") == gid) ? 0010 : 0001;
			if ((mode & search) == 0) {
				return ancestor;
			}
		}
		return null;
	}

	/** Open a directory from {@code /} without following any symbolic link. */
	private static SecureDirectoryStream<Path> open(Path directory) throws IOException {
		if (!directory.isAbsolute()) {
			throw new IOException(directory + " is not an absolute path");
		}
		DirectoryStream<Path> root = Files.newDirectoryStream(directory.getRoot());
		if (!(root instanceof SecureDirectoryStream<Path> current)) {
			root.close();
			throw new IOException("cannot open " + directory + " without following links on this platform");
		}
		try {
			for (Path name : directory) {
				SecureDirectoryStream<Path> next = current.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
				current.close();
				current = next;
			}
			return current;
		}
		catch (FileSystemException ex) {
			current.close();
			throw new IOException("cannot open " + directory + " without following symbolic links (a component is "
					+ "one, or was swapped for one): " + ex.getMessage(), ex);
		}
		catch (IOException | RuntimeException ex) {
			current.close();
			throw ex;
		}
	}

}
