package dev.cavesandbox;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * A working directory's group handed to a command user for one execution, and taken back.
 * On the seccomp rung a root JVM's command runs as a uid of the host without any
 * capability ({@code cave.sandbox.linux.command-user}), so it could not write the JVM's
 * directory (owned by root, mode 0700): for the execution the directory's group becomes
 * the command user's gid, with read, write and search permission for the group; then the
 * group and mode it had are put back. The owner stays root, so the command cannot change
 * the directory's mode or hand it on. What the command creates in it stays the command
 * user's.
 * <p>
 * The directory is reached from {@code /} one component at a time, each opened without
 * following a symbolic link ({@link SecureDirectoryStream}, {@code O_NOFOLLOW}), and
 * changed through the descriptor of the directory itself ({@code fchown},
 * {@code fchmod}): a component swapped for a link after the executor checked the path
 * makes the grant fail instead of giving the group another directory. The directory's
 * descriptor stays open until the grant is taken back through it, so that a path swapped
 * meanwhile can neither keep the group on the directory nor move it to another one.
 */
final class WorkingDirectoryGrant implements Closeable {

	private static final Set<PosixFilePermission> GROUP_ALL = EnumSet.of(PosixFilePermission.GROUP_READ,
			PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);

	private final SecureDirectoryStream<Path> opened;

	private final GroupPrincipal group;

	private final Set<PosixFilePermission> permissions;

	private WorkingDirectoryGrant(SecureDirectoryStream<Path> opened, GroupPrincipal group,
			Set<PosixFilePermission> permissions) {
		this.opened = opened;
		this.group = group;
		this.permissions = permissions;
	}

	/**
	 * Give the directory's group to a gid, with read, write and search permission, until
	 * {@link #close()}.
	 * @param directory the directory, an absolute real path
	 * @param gid the command user's gid
	 * @return the grant, to be closed after the execution
	 * @throws IOException if the directory cannot be reached without following a link or
	 * cannot be changed
	 */
	static WorkingDirectoryGrant grant(Path directory, long gid) throws IOException {
		GroupPrincipal commandGroup = FileSystems.getDefault()
			.getUserPrincipalLookupService()
			.lookupPrincipalByGroupName(String.valueOf(gid));
		SecureDirectoryStream<Path> opened = open(directory);
		WorkingDirectoryGrant grant;
		Set<PosixFilePermission> granted;
		try {
			PosixFileAttributes before = opened.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
			granted = EnumSet.copyOf(before.permissions());
			granted.addAll(GROUP_ALL);
			grant = new WorkingDirectoryGrant(opened, before.group(), Set.copyOf(before.permissions()));
		}
		catch (IOException | RuntimeException ex) {
			opened.close();
			throw ex;
		}
		try {
			PosixFileAttributeView view = opened.getFileAttributeView(PosixFileAttributeView.class);
			view.setGroup(commandGroup);
			view.setPermissions(granted);
			return grant;
		}
		catch (IOException | RuntimeException ex) {
			grant.close();
			throw ex;
		}
	}

	/**
	 * Put the group and mode back, through the directory's own descriptor, and close it.
	 * @throws IOException if they cannot be changed
	 */
	@Override
	public void close() throws IOException {
		try (SecureDirectoryStream<Path> directory = this.opened) {
			PosixFileAttributeView view = directory.getFileAttributeView(PosixFileAttributeView.class);
			view.setPermissions(this.permissions);
			view.setGroup(this.group);
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
	static @Nullable Path unpassableAncestor(Path directory, long uid) throws IOException {
		for (Path ancestor = directory.getParent(); ancestor != null; ancestor = ancestor.getParent()) {
			Map<String, Object> attributes = Files.readAttributes(ancestor, "unix:mode,uid,gid",
					LinkOption.NOFOLLOW_LINKS);
			int mode = (Integer) attributes.get("mode");
			int search = ((Integer) attributes.get("uid") == uid) ? 0100
					: ((Integer) attributes.get("gid") == uid) ? 0010 : 0001;
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
