package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.jspecify.annotations.Nullable;

/**
 * Resolves the settings' filesystem view on this host into a {@link FilesystemView}:
 * which system directories and links exist, which secret paths to mask, and which listed
 * paths can be shown. Listed paths are checked here, for the settings and for each
 * request alike.
 */
public final class ViewResolver {

	private ViewResolver() {
	}

	/**
	 * The view of the settings on this host.
	 * @param settings the settings
	 * @param hidden the hidden directories that exist (real paths, outermost)
	 * @param leftOut receives a sentence for each listed path of the settings that is
	 * left out of the view, with its reason
	 * @return the view
	 */
	public static FilesystemView resolve(SandboxSettings settings, List<Path> hidden, List<String> leftOut) {
		SandboxSettings.Filesystem filesystem = settings.filesystem();
		List<Path> readable = new ArrayList<>();
		for (Path path : filesystem.readablePaths()) {
			addListed("readable path", path, readable, leftOut);
		}
		List<Path> writable = writablePaths(settings, leftOut);
		if (filesystem.view() == SandboxSettings.Filesystem.View.HOST) {
			return new FilesystemView(FilesystemView.Kind.HOST, hidden, settings.readOnlyRoot(), List.of(), Map.of(),
					List.of(), List.of(), readable, writable);
		}
		Map<Path, Path> links = new LinkedHashMap<>();
		List<Path> directories = systemDirectories(settings, links);
		List<Path> maskedFiles = new ArrayList<>();
		List<Path> maskedDirectories = new ArrayList<>();
		for (Path secret : FilesystemView.DEFAULT_SECRET_PATHS) {
			try {
				Path real = secret.toRealPath();
				if (directories.stream().noneMatch(real::startsWith)) {
					continue;
				}
				if (Files.isDirectory(real, LinkOption.NOFOLLOW_LINKS)) {
					maskedDirectories.add(real);
				}
				else {
					maskedFiles.add(real);
				}
			}
			catch (IOException ex) {
				// Not on this host: nothing to mask.
			}
		}
		return new FilesystemView(FilesystemView.Kind.SYSTEM, hidden, true, directories, links, maskedFiles,
				maskedDirectories, readable, writable);
	}

	/**
	 * The settings' writable paths that can be shown: none that is, holds or lies in a
	 * directory the sandbox's own programs come from.
	 */
	private static List<Path> writablePaths(SandboxSettings settings, List<String> leftOut) {
		List<Path> writable = new ArrayList<>();
		List<Path> programs = programDirectories(settings);
		for (Path path : settings.filesystem().writablePaths()) {
			Path normalized = path.toAbsolutePath().normalize();
			Path program = programs.stream()
				.filter((directory) -> directory.startsWith(normalized) || normalized.startsWith(directory))
				.findFirst()
				.orElse(null);
			if (program != null) {
				leftOut.add("writable path " + path + " left out: it "
						+ (normalized.startsWith(program) ? "lies in " : "holds ") + program
						+ ", where the sandbox's own programs come from (list it as a readable path instead)");
			}
			else {
				addListed("writable path", path, writable, leftOut);
			}
		}
		return writable;
	}

	/**
	 * The system directories of the system view that exist on this host, as outermost
	 * real paths: {@link FilesystemView#DEFAULT_SYSTEM_PATHS}, the JDK's home, and the
	 * directory of the unshare mechanism's nested unshare(1), which it runs after it has
	 * entered the view.
	 * @param links receives each link at the root ({@code /bin -> usr/bin}) with its
	 * target, recreated as it is in the view
	 */
	private static List<Path> systemDirectories(SandboxSettings settings, Map<Path, Path> links) {
		List<Path> candidates = new ArrayList<>(FilesystemView.DEFAULT_SYSTEM_PATHS);
		candidates.add(Path.of(System.getProperty("java.home")));
		Path unshare = settings.linux().unsharePath().toAbsolutePath().getParent();
		if (unshare != null && unshare.getParent() != null) {
			candidates.add(unshare);
		}
		List<Path> directories = new ArrayList<>();
		for (Path path : candidates) {
			try {
				if (Files.isSymbolicLink(path) && path.getParent() != null && path.getParent().getParent() == null) {
					// A link at the root: its target must be shown too.
					links.put(path, Files.readSymbolicLink(path));
				}
				Path real = path.toRealPath();
				if (Files.isDirectory(real) && real.getParent() != null) {
					directories.add(real);
				}
			}
			catch (IOException ex) {
				// Not on this host.
			}
		}
		return FilesystemView.outermost(directories);
	}

	/**
	 * The directories the sandbox's own programs come from, as real paths: those of the
	 * baseline {@code PATH} (where the wrappers find {@code sh}, {@code mount},
	 * {@code setsid}), of the wrapper binaries and of an installed launcher. A writable
	 * path must not reach them: a root JVM's command could replace what later sandboxes
	 * run. (The executor checks each execution's writable paths against its own list,
	 * which also has the extracted launcher's directory.)
	 */
	private static List<Path> programDirectories(SandboxSettings settings) {
		List<Path> candidates = new ArrayList<>();
		for (String entry : SandboxSettings.BASELINE_PATH.split(":")) {
			candidates.add(Path.of(entry));
		}
		SandboxSettings.Linux linux = settings.linux();
		List<Path> binaries = new ArrayList<>(List.of(linux.unsharePath(), linux.setprivPath(), linux.bwrapPath()));
		if (linux.launcherPath() != null) {
			binaries.add(linux.launcherPath());
		}
		for (Path binary : binaries) {
			Path parent = binary.toAbsolutePath().getParent();
			if (parent != null) {
				candidates.add(parent);
			}
		}
		List<Path> directories = new ArrayList<>();
		for (Path candidate : candidates) {
			try {
				Path real = candidate.toRealPath();
				if (!directories.contains(real)) {
					directories.add(real);
				}
			}
			catch (IOException ex) {
				// Not on this host: nothing there to protect.
			}
		}
		return directories;
	}

	private static void addListed(String what, Path path, List<Path> into, List<String> leftOut) {
		String problem = problem(path);
		if (problem != null) {
			leftOut.add(what + " " + path + " left out: " + problem);
		}
		else if (!into.contains(path.normalize())) {
			// The view takes normalized paths only, as a request's are.
			into.add(path.normalize());
		}
	}

	/**
	 * Check a listed path of a request: it must exist, be absolute and real (no symbolic
	 * link in any component: a link could later point elsewhere), and must neither be nor
	 * hold nor lie in a home of the private directories and the launcher, which the
	 * sandbox hides.
	 * @param what {@code readable path} or {@code writable path}
	 * @param path the path
	 * @return the path
	 * @throws InvalidExecutionRequestException if it cannot be shown
	 */
	public static Path checkRequested(String what, Path path) {
		String problem = problem(path);
		if (problem != null) {
			throw new InvalidExecutionRequestException(
					what + " " + path + " cannot be shown to the command: " + problem);
		}
		return path;
	}

	/**
	 * Return the secret path of {@link FilesystemView#DEFAULT_SECRET_PATHS} that the
	 * given real path is or lies in, or, when {@code orHolds}, also one that lies in it.
	 * @param real an absolute real path
	 * @param orHolds whether a secret inside the path counts too
	 * @return the secret, or {@code null}
	 */
	public static @Nullable Path secretAround(Path real, boolean orHolds) {
		for (Path secret : FilesystemView.DEFAULT_SECRET_PATHS) {
			if (real.startsWith(secret) || (orHolds && secret.startsWith(real))) {
				return secret;
			}
		}
		return null;
	}

	/** Why a listed path cannot be shown, or {@code null} when it can. */
	private static @Nullable String problem(Path path) {
		Path absolute = path.toAbsolutePath().normalize();
		Path real;
		try {
			real = path.toRealPath();
		}
		catch (IOException ex) {
			return "it does not exist or cannot be resolved (" + ex.getClass().getSimpleName() + ")";
		}
		if (!real.equals(absolute)) {
			return "it goes through a symbolic link (it resolves to " + real
					+ "); list the real path if that is what you mean";
		}
		if (real.getParent() == null) {
			return "it is the root";
		}
		Path secret = secretAround(real, false);
		if (secret != null) {
			return "it lies in " + secret + ", a secret the system view masks (masks stay on whatever is listed)";
		}
		Path home = PrivateHome.touchedBy(real);
		if (home != null) {
			return "it " + ((real.startsWith(home)) ? "lies in " : "holds ") + home
					+ ", a home of the private working directories and of the launcher, which the sandbox hides";
		}
		return null;
	}

}
