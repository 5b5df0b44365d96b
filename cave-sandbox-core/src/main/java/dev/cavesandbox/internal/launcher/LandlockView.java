package dev.cavesandbox.internal.launcher;

import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.internal.mechanism.FilesystemView;

/**
 * A {@linkplain FilesystemView filesystem view} as the launcher's options, for the
 * mechanisms without a mount namespace, where the launcher builds the view with Landlock
 * (landlock(7)): {@code --write PATH} is writable beneath, and with any
 * {@code --read PATH} (a system view) reading and executing are handled too, so that the
 * command reads only beneath its working directory, the read and write paths,
 * {@code /proc}, {@code /sys/fs/cgroup} and a few device files; a {@code --mask PATH}
 * inside a read path gets no rule.
 */
public final class LandlockView {

	private LandlockView() {
	}

	/**
	 * Return the options by which the launcher builds a filesystem view with Landlock:
	 * for a system view {@code --read PATH} for each system directory and readable path,
	 * {@code --mask PATH} for each masked file and directory, then {@code --write PATH}
	 * for each writable path; for a host view only the {@code --write} options (reads
	 * stay the host's). The system links need nothing: they resolve on the host, where
	 * Landlock judges their targets.
	 * @param view the view
	 * @return the options
	 * @throws IllegalArgumentException for a system view without any system directory or
	 * readable path, which the launcher could not tell from a host view
	 */
	public static List<String> options(FilesystemView view) {
		List<String> options = new ArrayList<>();
		if (view.isSystem()) {
			if (view.systemDirectories().isEmpty() && view.readablePaths().isEmpty()) {
				throw new IllegalArgumentException("a system view needs a system directory or a readable path: "
						+ "the launcher reads a view without any as the host's");
			}
			view.systemDirectories().forEach((path) -> options.addAll(List.of("--read", path.toString())));
			view.readablePaths().forEach((path) -> options.addAll(List.of("--read", path.toString())));
			view.maskedFiles().forEach((path) -> options.addAll(List.of("--mask", path.toString())));
			view.maskedDirectories().forEach((path) -> options.addAll(List.of("--mask", path.toString())));
		}
		view.writablePaths().forEach((path) -> options.addAll(List.of("--write", path.toString())));
		return options;
	}

}
