package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.internal.launcher.Launcher;
import org.jspecify.annotations.Nullable;

/**
 * Writes a request's input files ({@link ExecutionRequest#inputFiles()}) into its new
 * private working directory before the command runs. Nothing is followed: each directory
 * is created ({@code mkdir}, which fails on anything already there) and each file created
 * new ({@code O_CREAT|O_EXCL}, which fails on a symbolic link too), although nothing but
 * this JVM can write the fresh directory yet.
 * <p>
 * Owner-only (files {@code 0600}, directories {@code 0700}): the command reads and writes
 * them as the JVM's user does (a root JVM's command user has {@code CAP_DAC_OVERRIDE}
 * over root's files in its user namespace); on the seccomp mechanism, whose command user
 * is a uid of the host without capabilities, they get its group with read and write
 * permission (directories search too), as the working directory itself does for the
 * execution ({@link WorkingDirectoryGrant}).
 */
public final class InputFiles {

	private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");

	private static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");

	private static final Set<PosixFilePermission> GROUP_FILE = PosixFilePermissions.fromString("rw-rw----");

	private static final Set<PosixFilePermission> GROUP_DIRECTORY = PosixFilePermissions.fromString("rwxrwx---");

	private InputFiles() {
	}

	/**
	 * Write the files below the directory.
	 * @param directory a new, empty private working directory
	 * @param files content by relative path, as {@link ExecutionRequest#inputFiles()}
	 * checked them
	 * @param commandGroup the gid of the command user that must read them, or
	 * {@link Launcher#CALLER}
	 * @throws SandboxLaunchException if one cannot be written
	 */
	public static void write(Path directory, Map<String, byte[]> files, long commandGroup) {
		if (files.isEmpty()) {
			return;
		}
		try {
			@Nullable GroupPrincipal group = (commandGroup >= 0) ? FileSystems.getDefault()
				.getUserPrincipalLookupService()
				.lookupPrincipalByGroupName(String.valueOf(commandGroup)) : null;
			for (Map.Entry<String, byte[]> file : files.entrySet()) {
				write(directory, file.getKey(), file.getValue(), group);
			}
		}
		catch (IOException ex) {
			throw new SandboxLaunchException(
					"could not write the input files into the private working directory, the command did not run: "
							+ ex,
					ex);
		}
	}

	private static void write(Path directory, String relativePath, byte[] content, @Nullable GroupPrincipal group)
			throws IOException {
		String[] names = relativePath.split("/");
		Path parent = directory;
		for (int i = 0; i < names.length - 1; i++) {
			parent = parent.resolve(names[i]);
			if (!Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)) {
				Files.createDirectory(parent, PosixFilePermissions.asFileAttribute(OWNER_DIRECTORY));
				share(parent, GROUP_DIRECTORY, group);
			}
		}
		Path file = parent.resolve(names[names.length - 1]);
		try (SeekableByteChannel out = Files.newByteChannel(file,
				Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
				PosixFilePermissions.asFileAttribute(OWNER_FILE))) {
			ByteBuffer buffer = ByteBuffer.wrap(content);
			while (buffer.hasRemaining()) {
				out.write(buffer);
			}
		}
		share(file, GROUP_FILE, group);
	}

	/**
	 * Give the command user's group, if any, the permissions; created owner-only (the
	 * umask may only take away), the entry gets the group before the group permissions.
	 */
	private static void share(Path path, Set<PosixFilePermission> permissions, @Nullable GroupPrincipal group)
			throws IOException {
		if (group == null) {
			return;
		}
		PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class,
				LinkOption.NOFOLLOW_LINKS);
		view.setGroup(group);
		view.setPermissions(permissions);
	}

}
