package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The hand-over of a probe session's entries to the seccomp mechanism's command user for
 * one run, and back: the session's directory passable (0701), the working directory, its
 * marker, the shared-memory directory and the directory of the write outside (0300) the
 * command uid's during the run; the JVM user's again (0700) after it.
 */
final class CommandUserGrant {

	private static final Set<PosixFilePermission> PASSABLE = PosixFilePermissions.fromString("rwx-----x");

	private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	/** Owner 0300: the command's uid creates files, but cannot list them. */
	private static final int GRANTED_OUTSIDE = 0300;

	/** The mode of the directory of the write outside while no command runs. */
	private static final int OUTSIDE_MODE = 0700;

	private CommandUserGrant() {
	}

	/**
	 * Let a command user of the seccomp mechanism (a uid of the host) pass the session's
	 * directory (which stays the JVM user's), have its working directory, marker and
	 * shared-memory directory, and create files in the directory of the write outside
	 * (given to the command's uid, not to its group: gid 65534 is the host's
	 * {@code nobody}'s too). No one else can replace an entry of the session's directory,
	 * so the paths through it reach the session's own entries; none is followed where it
	 * is a link.
	 */
	static void grant(ProbeDirectory own, long uid, boolean sharedMemory) throws IOException {
		own.attributes().setPermissions(PASSABLE);
		Path through = own.through();
		Path directory = through.resolve(ProbeSession.WORKING_DIRECTORY);
		Files.setAttribute(directory.resolve(ProbeSession.MARKER_FILE), "unix:uid", (int) uid,
				LinkOption.NOFOLLOW_LINKS);
		Files.setAttribute(directory, "unix:uid", (int) uid, LinkOption.NOFOLLOW_LINKS);
		if (sharedMemory) {
			Files.setAttribute(through.resolve(ProbeSession.WORKING_DIRECTORY + ProbeSession.SHARED_MEMORY_SUFFIX),
					"unix:uid", (int) uid, LinkOption.NOFOLLOW_LINKS);
		}
		Path outside = through.resolve(ProbeSession.WORKING_DIRECTORY + ProbeSession.OUTSIDE_SUFFIX);
		Files.setAttribute(outside, "unix:uid", (int) uid, LinkOption.NOFOLLOW_LINKS);
		Files.setAttribute(outside, "unix:mode", GRANTED_OUTSIDE, LinkOption.NOFOLLOW_LINKS);
	}

	/**
	 * Give the working directory, its marker, the shared-memory directory and the
	 * directory of the write outside (mode 0700 again) back to the JVM's user after a run
	 * that granted them: a later run without the command user (as root without
	 * capabilities, see LinuxProbe) could not open a directory of the command uid's with
	 * mode 0700, and the command uid keeps no entry to write from the host.
	 */
	static void handBack(ProbeDirectory own, boolean sharedMemory) throws IOException {
		own.attributes().setPermissions(OWNER_ONLY);
		Path through = own.through();
		int owner = (Integer) Files.getAttribute(through, "unix:uid");
		Path directory = through.resolve(ProbeSession.WORKING_DIRECTORY);
		Files.setAttribute(directory, "unix:uid", owner, LinkOption.NOFOLLOW_LINKS);
		// the command uid may have removed its marker: the next run's check says so
		handBack(directory.resolve(ProbeSession.MARKER_FILE), owner);
		if (sharedMemory) {
			handBack(through.resolve(ProbeSession.WORKING_DIRECTORY + ProbeSession.SHARED_MEMORY_SUFFIX), owner);
		}
		Path outside = through.resolve(ProbeSession.WORKING_DIRECTORY + ProbeSession.OUTSIDE_SUFFIX);
		Files.setAttribute(outside, "unix:uid", owner, LinkOption.NOFOLLOW_LINKS);
		Files.setAttribute(outside, "unix:mode", OUTSIDE_MODE, LinkOption.NOFOLLOW_LINKS);
	}

	private static void handBack(Path entry, int owner) throws IOException {
		try {
			Files.setAttribute(entry, "unix:uid", owner, LinkOption.NOFOLLOW_LINKS);
		}
		catch (NoSuchFileException ex) {
			// gone: nothing to give back
		}
	}

}
