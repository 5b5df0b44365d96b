package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ViewResolver}: the settings' view resolved on this host (CI's image
 * and the development hosts: Debian 12, merged {@code /usr}), and the checks of listed
 * paths.
 */
class ViewResolverTests {

	private static final List<Path> HIDDEN = List.of(Path.of("/tmp"), Path.of("/run"));

	/**
	 * On a merged-{@code /usr} host the system view shows {@code /usr} and {@code /etc},
	 * and the JVM's {@code java.home} only where it lies outside them (a JDK in
	 * {@code /opt}): {@code /bin}, {@code /lib} and the others are links into
	 * {@code /usr}, not directories of their own.
	 */
	@Test
	void systemViewShowsUsrEtcAndJavaHomeOnce() throws IOException {
		Path javaHome = Path.of(System.getProperty("java.home")).toRealPath();
		FilesystemView view = resolve(SandboxSettings.defaults());
		assertThat(view.isSystem()).isTrue();
		List<Path> expected = new ArrayList<>(List.of(Path.of("/usr"), Path.of("/etc"), javaHome));
		// Debian's LibreOffice, where installed (CI installs it for the compatibility
		// suite).
		if (Files.isDirectory(Path.of("/var/spool/libreoffice"))) {
			expected.add(Path.of("/var/spool/libreoffice"));
		}
		assertThat(view.systemDirectories()).startsWith(Path.of("/usr"), Path.of("/etc"))
			.containsExactlyInAnyOrderElementsOf(FilesystemView.outermost(expected));
		assertThat(view.systemDirectories()).anyMatch(javaHome::startsWith);
		assertThat(view.hides(javaHome.resolve("bin/java"))).isFalse();
		assertThat(view.hiddenDirectories()).isEqualTo(HIDDEN);
		assertThat(view.readOnlyRoot()).isTrue();
	}

	/**
	 * The links at the root ({@code /bin -> usr/bin} and the others of a merged
	 * {@code /usr}) are kept with their target as the host has it, relative; what does
	 * not exist on this host ({@code /lib32}, {@code /libx32}) is not in the view.
	 */
	@Test
	void systemViewRecreatesTheRootLinksOfTheHost() {
		FilesystemView view = resolve(SandboxSettings.defaults());
		assertThat(view.systemLinks())
			.containsExactlyInAnyOrderEntriesOf(Map.of(Path.of("/bin"), Path.of("usr/bin"), Path.of("/sbin"),
					Path.of("usr/sbin"), Path.of("/lib"), Path.of("usr/lib"), Path.of("/lib64"), Path.of("usr/lib64")));
		assertThat(view.hides(Path.of("/bin"))).isFalse();
		assertThat(view.hides(Path.of("/lib32"))).isTrue();
	}

	/**
	 * Each secret path that exists on this host is masked by its kind
	 * ({@code /etc/shadow} as a file, {@code /etc/ssl/private} as a directory); one that
	 * does not exist ({@code /etc/sudoers} on this image) is not.
	 */
	@Test
	void systemViewMasksTheSecretsThatExistByTheirKind() {
		assertThat(Path.of("/etc/shadow")).isRegularFile();
		assertThat(Path.of("/etc/ssl/private")).isDirectory();
		FilesystemView view = resolve(SandboxSettings.defaults());
		assertThat(view.maskedFiles()).contains(Path.of("/etc/shadow"))
			.doesNotContain(Path.of("/etc/ssl/private"), Path.of("/etc/sudoers"));
		assertThat(view.maskedDirectories()).contains(Path.of("/etc/ssl/private"))
			.doesNotContain(Path.of("/etc/shadow"), Path.of("/etc/sudoers"));
		List<Path> files = new ArrayList<>();
		List<Path> directories = new ArrayList<>();
		for (Path secret : FilesystemView.DEFAULT_SECRET_PATHS) {
			if (Files.isDirectory(secret, LinkOption.NOFOLLOW_LINKS)) {
				directories.add(secret);
			}
			else if (Files.exists(secret, LinkOption.NOFOLLOW_LINKS)) {
				files.add(secret);
			}
		}
		assertThat(view.maskedFiles()).containsExactlyElementsOf(files);
		assertThat(view.maskedDirectories()).containsExactlyElementsOf(directories);
		assertThat(view.hides(Path.of("/etc/shadow"))).isTrue();
		assertThat(view.hides(Path.of("/etc/ssl/private/any.key"))).isTrue();
		assertThat(view.hides(Path.of("/etc/passwd"))).isFalse();
	}

	/**
	 * The host view has no system directories, links or masks, and keeps the settings'
	 * {@code readOnlyRoot}; the system view is read-only whatever that setting says.
	 */
	@Test
	void hostViewHasNoneOfTheSystemViewAndKeepsReadOnlyRoot() {
		for (boolean readOnlyRoot : new boolean[] { true, false }) {
			FilesystemView view = resolve(SandboxSettings.builder()
				.filesystemView(SandboxSettings.Filesystem.View.HOST)
				.readOnlyRoot(readOnlyRoot)
				.build());
			assertThat(view.isSystem()).isFalse();
			assertThat(view.kind()).isEqualTo(FilesystemView.Kind.HOST);
			assertThat(view.readOnlyRoot()).isEqualTo(readOnlyRoot);
			assertThat(view.hiddenDirectories()).isEqualTo(HIDDEN);
			assertThat(view.systemDirectories()).isEmpty();
			assertThat(view.systemLinks()).isEmpty();
			assertThat(view.maskedFiles()).isEmpty();
			assertThat(view.maskedDirectories()).isEmpty();
			assertThat(view.hides(Path.of("/etc/shadow"))).isFalse();
			assertThat(view.hides(Path.of("/opt"))).isFalse();
		}
		assertThat(resolve(SandboxSettings.builder().readOnlyRoot(false).build()).readOnlyRoot()).isTrue();
	}

	/**
	 * A listed path of the settings that is real and exists is in the view, each once;
	 * one that does not exist, one through a symbolic link, and one that holds or lies in
	 * a home of the private directories are left out, each with a sentence that names it
	 * and its reason.
	 */
	@Test
	void listedPathsThatCannotBeShownAreLeftOutWithTheirReason(@TempDir Path temporary) throws IOException {
		Path directory = temporary.toRealPath();
		Path data = Files.createDirectory(directory.resolve("data"));
		Path out = Files.createDirectory(directory.resolve("out"));
		Path missing = directory.resolve("missing");
		Path link = Files.createSymbolicLink(directory.resolve("link"), data);
		Path holder = Files.createDirectory(directory.resolve("holder"));
		Path home = PrivateHome.of(holder);
		Path inHome = Files.createDirectory(home.resolve("inside"));
		List<String> leftOut = new ArrayList<>();
		FilesystemView view = ViewResolver.resolve(SandboxSettings.builder()
			.readablePaths(List.of(data, missing, link, data))
			.writablePaths(List.of(out, holder, inHome))
			.build(), HIDDEN, leftOut);
		assertThat(view.readablePaths()).containsExactly(data);
		assertThat(view.writablePaths()).containsExactly(out);
		assertThat(leftOut).containsExactly(
				"readable path " + missing + " left out: it does not exist or cannot be resolved (NoSuchFileException)",
				"readable path " + link + " left out: it goes through a symbolic link (it resolves to " + data
						+ "); list the real path if that is what you mean",
				"writable path " + holder + " left out: it holds " + home
						+ ", a home of the private working directories and of the launcher, which the sandbox hides",
				"writable path " + inHome + " left out: it lies in " + home
						+ ", a home of the private working directories and of the launcher, which the sandbox hides");
	}

	/**
	 * A listed path with {@code ..} is shown by its normalized path, as a request's is.
	 */
	@Test
	void listedPathWithDotDotIsShownNormalized(@TempDir Path temporary) throws IOException {
		Path directory = temporary.toRealPath();
		Path data = Files.createDirectory(directory.resolve("data"));
		List<String> leftOut = new ArrayList<>();
		FilesystemView view = ViewResolver.resolve(
				SandboxSettings.builder().readablePaths(List.of(directory.resolve("data/../data"))).build(), HIDDEN,
				leftOut);
		assertThat(leftOut).isEmpty();
		assertThat(view.readablePaths()).containsExactly(data);
	}

	/**
	 * A request's path that cannot be shown fails the request with the invalid-request
	 * code, naming the path and the reason; one that can is returned as it is.
	 */
	@Test
	void requestedPathsThatCannotBeShownAreInvalidRequests(@TempDir Path temporary) throws IOException {
		Path directory = temporary.toRealPath();
		Path data = Files.createDirectory(directory.resolve("data"));
		Path link = Files.createSymbolicLink(directory.resolve("link"), data);
		Path holder = Files.createDirectory(directory.resolve("holder"));
		Path home = PrivateHome.of(holder);
		assertThat(ViewResolver.checkRequested("readable path", data)).isEqualTo(data);
		assertInvalid("readable path", directory.resolve("missing"),
				"readable path " + directory.resolve("missing")
						+ " cannot be shown to the command: it does not exist or cannot be resolved "
						+ "(NoSuchFileException)");
		assertInvalid("writable path", link, "writable path " + link
				+ " cannot be shown to the command: it goes through a symbolic link (it resolves to " + data + ")");
		assertInvalid("writable path", holder, "writable path " + holder + " cannot be shown to the command: it holds "
				+ home + ", a home of the private working directories and of the launcher, which the sandbox hides");
		assertInvalid("readable path", home,
				"readable path " + home + " cannot be shown to the command: it lies in " + home);
		assertInvalid("readable path", Path.of("/"), "readable path / cannot be shown to the command: it is the root");
		if (Files.isDirectory(Path.of("/etc/ssl/private"))) {
			assertInvalid("readable path", Path.of("/etc/ssl/private"), "readable path /etc/ssl/private cannot be "
					+ "shown to the command: it lies in /etc/ssl/private, a secret the system view masks");
		}
		assertThat(ViewResolver.checkRequested("readable path", Path.of("/etc"))).isEqualTo(Path.of("/etc"));
	}

	/**
	 * A writable path of the settings that is or holds a directory the sandbox's own
	 * programs come from ({@code /usr/local} holds {@code /usr/local/sbin} of the
	 * baseline PATH) is left out at startup, naming the directory, rather than fail every
	 * execution later; a readable one is shown.
	 */
	@Test
	void writablePathThatHoldsTheSandboxsProgramsIsLeftOut() throws IOException {
		Path local = Path.of("/usr/local").toRealPath();
		Path sbin = Path.of("/usr/local/sbin").toRealPath();
		List<String> leftOut = new ArrayList<>();
		FilesystemView view = ViewResolver.resolve(
				SandboxSettings.builder().writablePaths(List.of(local)).readablePaths(List.of(local)).build(), HIDDEN,
				leftOut);
		assertThat(view.writablePaths()).isEmpty();
		assertThat(view.readablePaths()).containsExactly(local);
		assertThat(leftOut).containsExactly("writable path " + local + " left out: it holds " + sbin
				+ ", where the sandbox's own programs come from (list it as a readable path instead)");
	}

	private static void assertInvalid(String what, Path path, String message) {
		assertThatExceptionOfType(InvalidExecutionRequestException.class)
			.isThrownBy(() -> ViewResolver.checkRequested(what, path))
			.withMessageContaining(message)
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
	}

	private static FilesystemView resolve(SandboxSettings settings) {
		List<String> leftOut = new ArrayList<>();
		FilesystemView view = ViewResolver.resolve(settings, HIDDEN, leftOut);
		assertThat(leftOut).isEmpty();
		return view;
	}

}
