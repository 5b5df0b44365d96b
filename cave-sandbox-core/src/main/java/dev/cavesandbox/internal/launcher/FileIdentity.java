package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;

import dev.cavesandbox.internal.launcher.LauncherInstallation.UnavailableException;

/**
 * A file's identity as far as replacing or writing it goes: its device, inode, size,
 * modification and change times (stat(2)), read without following a link.
 */
record FileIdentity(String device, String inode, String size, String modified, String changed) {

	/**
	 * Read the identity of a launcher.
	 * @param launcher the launcher
	 * @return its identity
	 * @throws UnavailableException if it cannot be read
	 */
	static FileIdentity of(Path launcher) throws UnavailableException {
		try {
			Map<String, Object> attributes = Files.readAttributes(launcher, "unix:dev,ino,size,lastModifiedTime,ctime",
					LinkOption.NOFOLLOW_LINKS);
			return new FileIdentity(String.valueOf(attributes.get("dev")), String.valueOf(attributes.get("ino")),
					String.valueOf(attributes.get("size")), String.valueOf(attributes.get("lastModifiedTime")),
					String.valueOf(attributes.get("ctime")));
		}
		catch (IOException | UnsupportedOperationException ex) {
			throw new UnavailableException("cannot read the launcher " + launcher + ": " + ex);
		}
	}

}
