package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.workspace.ViewResolver;

/**
 * The facts outside the sandbox that the Linux probe compares the child's with.
 *
 * @param netNamespace the JVM's network namespace ({@code net:[...]})
 * @param pidNamespace the JVM's PID namespace ({@code pid:[...]})
 * @param ipcNamespace the JVM's IPC namespace ({@code ipc:[...]})
 * @param uid the JVM's uid
 * @param gid the JVM's gid
 * @param view the view of the settings on this host: the hidden directories (resolved,
 * existing), the root's mode, and in a system view the system directories and masks
 * @param hiddenDevices the device number of each hidden directory on the host
 * @param hardLimits the JVM's finite hard resource limits, by their names in
 * {@code /proc/self/limits} ({@code processes}, {@code open files}, ...): a child's limit
 * cannot be above them (setrlimit(2)), so the launcher lowers a setting above one to it
 * @param leftOut a sentence for each listed path of the settings that the view leaves
 * out, with its reason
 */
public record HostFacts(String netNamespace, String pidNamespace, String ipcNamespace, long uid, long gid,
		FilesystemView view, Map<Path, Long> hiddenDevices, Map<String, Long> hardLimits, List<String> leftOut) {

	/** The limits of {@code /proc/self/limits}: name, soft limit, hard limit. */
	private static final Pattern LIMIT = Pattern.compile("^Max (\\S+(?: \\S+)*)\\s{2,}(\\S+)\\s+(\\S+).*");

	public HostFacts {
		hardLimits = Map.copyOf(hardLimits);
		leftOut = List.copyOf(leftOut);
	}

	HostFacts(String netNamespace, String pidNamespace, String ipcNamespace, long uid, long gid, FilesystemView view,
			Map<Path, Long> hiddenDevices, Map<String, Long> hardLimits) {
		this(netNamespace, pidNamespace, ipcNamespace, uid, gid, view, hiddenDevices, hardLimits, List.of());
	}

	HostFacts(String netNamespace, String pidNamespace, String ipcNamespace, long uid, long gid, FilesystemView view,
			Map<Path, Long> hiddenDevices) {
		this(netNamespace, pidNamespace, ipcNamespace, uid, gid, view, hiddenDevices, Map.of());
	}

	/**
	 * Read the facts of this JVM. What cannot be read is {@code unknown} (a namespace) or
	 * {@code -1} (a number), which no child's fact matches.
	 * @param settings the settings that name the hidden directories and the root's mode
	 * @param alsoHidden directories hidden besides the settings' (the home of the private
	 * directories and the launcher)
	 * @return the facts
	 */
	static HostFacts current(SandboxSettings settings, List<Path> alsoHidden) {
		List<Path> existing = new ArrayList<>();
		List<Path> hidden = new ArrayList<>(settings.hiddenDirectories());
		hidden.addAll(alsoHidden);
		for (Path directory : hidden) {
			try {
				Path real = directory.toRealPath();
				if (Files.isDirectory(real) && real.getParent() != null) {
					existing.add(real);
				}
			}
			catch (IOException ex) {
				// Does not exist on this host: nothing to hide.
			}
		}
		List<String> leftOut = new ArrayList<>();
		FilesystemView view = ViewResolver.resolve(settings, FilesystemView.outermost(existing), leftOut);
		Map<Path, Long> devices = new LinkedHashMap<>();
		for (Path directory : view.hiddenDirectories()) {
			devices.put(directory, ((Number) attribute(directory, "unix:dev")).longValue());
		}
		Path self = Path.of("/proc/self");
		return new HostFacts(link("/proc/self/ns/net"), link("/proc/self/ns/pid"), link("/proc/self/ns/ipc"),
				((Number) attribute(self, "unix:uid")).longValue(), ((Number) attribute(self, "unix:gid")).longValue(),
				view, devices, hardLimits(Path.of("/proc/self/limits")), leftOut);
	}

	/**
	 * Read the finite hard limits of a {@code /proc/PID/limits} file; none when it cannot
	 * be read.
	 */
	public static Map<String, Long> hardLimits(Path limits) {
		Map<String, Long> hard = new LinkedHashMap<>();
		try {
			for (String line : Files.readAllLines(limits)) {
				Matcher matcher = LIMIT.matcher(line);
				if (matcher.matches() && matcher.group(3).chars().allMatch(Character::isDigit)
						&& matcher.group(3).length() < 19) {
					hard.put(matcher.group(1), Long.parseLong(matcher.group(3)));
				}
			}
		}
		catch (IOException ex) {
			// Unknown: the probe then expects the settings, and says so if they differ.
		}
		return hard;
	}

	private static Object attribute(Path path, String name) {
		try {
			return Files.getAttribute(path, name);
		}
		catch (IOException | UnsupportedOperationException ex) {
			return -1L;
		}
	}

	private static String link(String path) {
		try {
			return Files.readSymbolicLink(Path.of(path)).toString();
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "unknown";
		}
	}

}
