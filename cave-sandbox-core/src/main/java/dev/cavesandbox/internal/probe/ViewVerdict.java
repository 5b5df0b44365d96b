package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.probe.HostFacts;
import dev.cavesandbox.internal.probe.LinuxProbe;
import dev.cavesandbox.internal.probe.ProbeScript;
import org.jspecify.annotations.Nullable;

/**
 * Judges what the Linux probe's child saw of the filesystem view ({@code rootlist=},
 * {@code planted=} and {@code shadow=} lines of {@link ProbeScript}): in a system view,
 * the root lists nothing but what the view shows (a mechanism with a mount namespace) or
 * cannot be listed at all (Landlock), a file the probe planted beside the working
 * directory, readable by everyone, cannot be read, and {@code /etc/shadow} cannot be
 * read.
 */
public final class ViewVerdict {

	private ViewVerdict() {
	}

	/**
	 * Check the view and add its facts.
	 * @param facts the child's facts by key
	 * @param host the host's facts, with the view of the settings
	 * @param mountNamespace whether the mechanism builds the view with mounts (else
	 * Landlock)
	 * @param verified receives the facts
	 * @return why the view does not hold, or {@code null} when it does
	 */
	public static @Nullable String check(Map<String, List<String>> facts, HostFacts host, boolean mountNamespace,
			List<String> verified) {
		FilesystemView view = host.view();
		for (String leftOut : host.leftOut()) {
			verified.add(leftOut);
		}
		String listed = listed(view);
		if (!view.isSystem()) {
			verified.add("filesystem view: host (cave.sandbox.filesystem.view=host): every file the command's user "
					+ "can read, except in the hidden directories" + listed);
			return null;
		}
		String planted = ProbeScript.first(facts, "planted");
		if (!planted.equals("refused")) {
			return "the child could read a file outside the system view (a file of everyone's the probe planted "
					+ "beside its working directory: planted=" + (planted.isEmpty() ? "(no report)" : planted) + ")";
		}
		String shadow = ProbeScript.first(facts, "shadow");
		if (shadow.equals("readable") || shadow.isEmpty()) {
			return "the child could read /etc/shadow in the system view (shadow="
					+ (shadow.isEmpty() ? "(no report)" : shadow) + ")";
		}
		String rootList = ProbeScript.first(facts, "rootlist");
		String shown = view.systemDirectories().stream().map(Path::toString).collect(Collectors.joining(", "));
		if (mountNamespace) {
			if (rootList.equals("refused") || rootList.isEmpty()) {
				return "the child could not list / in the system view (rootlist="
						+ (rootList.isEmpty() ? "(no report)" : rootList) + ")";
			}
			Set<String> expected = expectedAtRoot(view);
			List<String> extra = new ArrayList<>();
			for (String name : rootList.split(" ")) {
				if (!name.isEmpty() && !expected.contains(name)) {
					extra.add("/" + name);
				}
			}
			if (!extra.isEmpty()) {
				return "the child sees " + String.join(", ", extra) + " at the root, outside the system view (expected "
						+ "only " + expected.stream().map((name) -> "/" + name).collect(Collectors.joining(", ")) + ")";
			}
			verified.add("filesystem view: system: the root holds only /" + rootList.replace(" ", ", /")
					+ "; read-only " + shown + masked(view) + listed
					+ "; nothing else of the host exists inside (a file planted beside the working directory is "
					+ "unreadable)");
			return null;
		}
		if (rootList.isEmpty()) {
			return "the child did not say whether it could list / in the system view (rootlist=(no report))";
		}
		if (!rootList.equals("refused")) {
			return "the child could list / in the system view (Landlock should refuse it): " + rootList;
		}
		verified.add("filesystem view: system, by Landlock: reading, listing and executing refused outside " + shown
				+ masked(view) + ", the working directory, /proc, /sys/fs/cgroup and the usual /dev files" + listed
				+ " (a file planted beside the working directory is unreadable)");
		verified.add(LinuxProbe.NOT_GIVEN + "hiding the names outside the system view: Landlock refuses reading "
				+ "them, not stat(2) (names, sizes and times stay visible)");
		return null;
	}

	/** The names a system view has at its root. */
	static Set<String> expectedAtRoot(FilesystemView view) {
		Set<String> names = new LinkedHashSet<>(List.of("dev", "proc"));
		Stream
			.of(view.systemDirectories(), List.copyOf(view.systemLinks().keySet()), view.hiddenDirectories(),
					view.readablePaths(), view.writablePaths())
			.flatMap(List::stream)
			.filter((path) -> path.getNameCount() > 0)
			.forEach((path) -> names.add(path.getName(0).toString()));
		// No name of its own for the probe's working directory: it lies in the work
		// directory, beside the private directories' home, which is a hidden directory.
		return names;
	}

	private static String masked(FilesystemView view) {
		List<Path> masked = new ArrayList<>(view.maskedFiles());
		masked.addAll(view.maskedDirectories());
		return masked.isEmpty() ? ""
				: " (masked: " + masked.stream().map(Path::toString).collect(Collectors.joining(", ")) + ")";
	}

	private static String listed(FilesystemView view) {
		StringBuilder listed = new StringBuilder();
		if (!view.readablePaths().isEmpty()) {
			listed.append("; readable: ")
				.append(view.readablePaths().stream().map(Path::toString).collect(Collectors.joining(", ")));
		}
		if (!view.writablePaths().isEmpty()) {
			listed.append("; writable: ")
				.append(view.writablePaths().stream().map(Path::toString).collect(Collectors.joining(", ")));
		}
		return listed.toString();
	}

}
