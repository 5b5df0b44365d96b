package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.mechanism.FilesystemView;

/**
 * What a sandbox's filesystem view rests on, taken when a warm sandbox is prepared and
 * again when it is claimed: the device, inode and change time of each secret the system
 * view masks, of the directory that holds it (which the mechanisms without a mount
 * namespace expand entry by entry, and whose entries a rename replaces) and of each path
 * the settings list. bwrap and unshare mask a secret by a mount on its dentry, and bind a
 * listed file by its inode: a host tool that renames a new file over one ({@code passwd}
 * does so for {@code /etc/shadow}) shows the new file through the live bind of
 * {@code /etc}, or leaves the sandbox the old listed file; Landlock's rules hold inodes.
 * A sandbox whose fingerprint changed while it waited is discarded, not claimed. About 20
 * {@code lstat(2)} calls.
 *
 * @param identities each path with {@code DEVICE:INODE:CTIME}, {@code absent} or
 * {@code unreadable}
 */
public record ViewFingerprint(Map<Path, String> identities) {

	public ViewFingerprint {
		identities = Map.copyOf(identities);
	}

	/**
	 * Return the paths a settings' view rests on: the secrets and their directories in a
	 * system view, and the settings' readable and writable paths.
	 * @param settings the settings
	 * @return the paths, each once
	 */
	public static List<Path> paths(SandboxSettings settings) {
		List<Path> paths = new ArrayList<>();
		if (settings.filesystem().view() == SandboxSettings.Filesystem.View.SYSTEM) {
			for (Path secret : FilesystemView.DEFAULT_SECRET_PATHS) {
				add(paths, secret.getParent());
				add(paths, secret);
			}
		}
		settings.filesystem().readablePaths().forEach((path) -> add(paths, path));
		settings.filesystem().writablePaths().forEach((path) -> add(paths, path));
		return List.copyOf(paths);
	}

	private static void add(List<Path> paths, Path path) {
		if (path != null && !paths.contains(path)) {
			paths.add(path);
		}
	}

	/**
	 * Take the fingerprint of the paths now.
	 * @param paths the paths of {@link #paths(SandboxSettings)}
	 * @return the fingerprint
	 */
	public static ViewFingerprint of(List<Path> paths) {
		Map<Path, String> identities = new LinkedHashMap<>();
		for (Path path : paths) {
			identities.put(path, identity(path));
		}
		return new ViewFingerprint(identities);
	}

	private static String identity(Path path) {
		try {
			Map<String, Object> key = Files.readAttributes(path, "unix:dev,ino,ctime", LinkOption.NOFOLLOW_LINKS);
			return key.get("dev") + ":" + key.get("ino") + ":" + key.get("ctime");
		}
		catch (NoSuchFileException ex) {
			return "absent";
		}
		catch (IOException | RuntimeException ex) {
			return "unreadable";
		}
	}

}
