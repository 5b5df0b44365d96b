package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The filesystem views that the command-line builders' tests build their lines from. */
final class TestViews {

	/** The host view with /tmp and /run hidden, read-only. */
	static final FilesystemView HIDE_TMP_AND_RUN = FilesystemView.of(List.of(Path.of("/tmp"), Path.of("/run")), true);

	/** A system view with every kind of entry: hidden, bound, linked, masked, listed. */
	static final FilesystemView SYSTEM = new FilesystemView(FilesystemView.Kind.SYSTEM,
			List.of(Path.of("/tmp"), Path.of("/dev/shm")), true, List.of(Path.of("/usr"), Path.of("/etc")),
			Map.of(Path.of("/lib"), Path.of("usr/lib"), Path.of("/bin"), Path.of("usr/bin")),
			List.of(Path.of("/etc/shadow")), List.of(Path.of("/etc/ssl/private")), List.of(Path.of("/srv/data")),
			List.of(Path.of("/srv/out")));

	private TestViews() {
	}

}
