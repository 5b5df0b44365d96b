package dev.cavesandbox;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The system view of the two mechanisms without a mount namespace ({@code namespaces} and
 * {@code seccomp}), which the launcher builds with Landlock read rules: the raw command
 * line of each mechanism, rebuilt from the verified mechanism with a system view, run by
 * this (root) JVM, whose commands run as its command user, and by an unprivileged user
 * (nobody) through {@code setpriv}. A file of mode 644 in {@code /srv} and in the JVM
 * user's home is unreadable until it is listed, {@code /etc/shadow} stays unreadable, a
 * link in the working directory reveals nothing, listed writable paths are writable and
 * listed readable ones are not, and the usual programs (and a child JVM) run unchanged.
 * Each case has an unisolated control where the answer would otherwise be the kernel's
 * permissions alone. Needs root; touches nothing but what it creates under {@code /srv},
 * {@code /root} and {@code /home}, which it removes.
 */
@EnabledOnOs(OS.LINUX)
class MechanismsWithoutMountsSystemViewTests {

	private Path srv;

	private Path rootHome;

	private Path nobodyHome;

	/**
	 * A directory with a file of mode 644 in {@code /srv}, in this JVM's home
	 * ({@code /root}) and in a stand-in for nobody's home, whose own
	 * ({@code /nonexistent}) does not exist: a directory of nobody's in {@code /home}.
	 */
	@BeforeEach
	void createHiddenFiles() throws IOException {
		String name = "cave-sandbox-view-" + UUID.randomUUID();
		this.srv = hiddenDirectory(Path.of("/srv").resolve(name));
		this.rootHome = hiddenDirectory(Path.of(System.getProperty("user.home")).toRealPath().resolve(name));
		this.nobodyHome = hiddenDirectory(Path.of("/home").resolve(name));
		toCommandUser(this.nobodyHome);
	}

	@AfterEach
	void removeHiddenFiles() throws IOException {
		for (Path directory : new Path[] { this.srv, this.rootHome, this.nobodyHome }) {
			if (directory != null) {
				try (Stream<Path> files = Files.walk(directory)) {
					files.sorted((a, b) -> b.compareTo(a)).forEach((path) -> path.toFile().delete());
				}
			}
		}
	}

	private static Path hiddenDirectory(Path directory) throws IOException {
		Files.createDirectory(directory);
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path secret = Files.writeString(directory.resolve("secret"), "hidden " + directory + "\n");
		Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-r--r--"));
		return directory;
	}

	static Stream<Arguments> mechanismsAndUsers() {
		return Stream.of(MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP)
			.flatMap((choice) -> Stream.of(Arguments.of(choice, false), Arguments.of(choice, true)));
	}

	/**
	 * {@code /srv} and the home are hidden, as is {@code /etc/shadow} (masked: no rule,
	 * whoever the command runs as) and what a link in the working directory points to;
	 * the working directory is writable. Listed, {@code /srv}'s file becomes readable,
	 * and the home's too where the command's user can reach it: a root JVM's seccomp
	 * command user is a uid of the host, which cannot pass root's home of mode 0700, and
	 * then the launcher refuses to set the sandbox up rather than run with less than was
	 * listed.
	 */
	@ParameterizedTest(name = "{0}, nobody={1}")
	@MethodSource("mechanismsAndUsers")
	void hiddenFilesAreUnreadableUntilListed(MechanismChoice choice, boolean nobody, @TempDir Path base)
			throws IOException, InterruptedException {
		Path work = workingDirectory(base);
		Files.createSymbolicLink(work.resolve("link"), this.srv.resolve("secret"));
		Path home = nobody ? this.nobodyHome : this.rootHome;
		String script = "cat " + this.srv + "/secret; echo srv $?; cat " + home + "/secret; echo home $?; "
				+ "cat link; echo link $?; cat /etc/shadow; echo shadow $?; ls /srv; echo list $?; "
				+ "echo written > out && cat out; echo work $?";
		NobodyCommandLines.Run hidden = run(choice, nobody, base, work, systemView(List.of(), List.of()), script);
		assertThat(hidden.output()).contains("srv 1\n", "home 1\n", "link 1\n", "shadow 1\n", "list 2\n",
				"written\nwork 0\n");
		assertThat(hidden.output()).doesNotContain("hidden ", "root:");
		NobodyCommandLines.Run control = NobodyCommandLines.run(
				NobodyCommandLines
					.asNobody(
							List.of("/bin/sh", "-c",
									"cat " + this.srv + "/secret; echo srv $?; cat " + work.resolve("link")
											+ "; echo link $?; cat " + this.nobodyHome + "/secret; echo home $?")),
				work);
		assertThat(control.output()).as("control: the same reads by uid 65534 without the sandbox")
			.contains("hidden " + this.srv + "\nsrv 0\n", "hidden " + this.srv + "\nlink 0\n",
					"hidden " + this.nobodyHome + "\nhome 0\n");
		boolean homeReachable = nobody || choice == MechanismChoice.NAMESPACES;
		List<Path> readable = homeReachable ? List.of(this.srv, home) : List.of(this.srv);
		NobodyCommandLines.Run listed = run(choice, nobody, base, work, systemView(readable, List.of()), script);
		assertThat(listed.output()).contains("hidden " + this.srv + "\nsrv 0\n", "hidden " + this.srv + "\nlink 0\n",
				"shadow 1\n", "written\nwork 0\n");
		if (homeReachable) {
			assertThat(listed.output()).contains("hidden " + home + "\nhome 0\n");
		}
		else {
			assertThat(listed.output()).contains("home 1\n");
			NobodyCommandLines.Run unreachable = run(choice, nobody, base, work,
					systemView(List.of(this.srv, home), List.of()), script);
			assertThat(unreachable.exitCode()).as(unreachable.output()).isEqualTo(125);
			assertThat(unreachable.output()).contains("cannot open " + home, "Permission denied")
				.doesNotContain("srv ");
		}
	}

	/**
	 * A listed writable path is writable and readable; a listed readable path is
	 * readable, not writable.
	 */
	@ParameterizedTest(name = "{0}, nobody={1}")
	@MethodSource("mechanismsAndUsers")
	void writablePathsAreWritableAndReadableOnesAreNot(MechanismChoice choice, boolean nobody, @TempDir Path base)
			throws IOException, InterruptedException {
		Path work = workingDirectory(base);
		Path writable = Files.createDirectory(this.srv.resolve("writable"));
		toCommandUser(writable);
		toCommandUser(this.srv);
		String script = "(echo new > " + this.srv + "/new) 2>&1 && echo readable written || echo readable refused; "
				+ "cat " + this.srv + "/secret; (echo new > " + writable + "/new) 2>&1 && cat " + writable
				+ "/new && echo writable written || echo writable refused";
		NobodyCommandLines.Run run = run(choice, nobody, base, work, systemView(List.of(this.srv), List.of(writable)),
				script);
		assertThat(run.output()).contains("readable refused\n", "hidden " + this.srv + "\n", "new\nwritable written\n");
		assertThat(Files.exists(this.srv.resolve("new"))).isFalse();
		assertThat(Files.readString(writable.resolve("new"))).isEqualTo("new\n");
	}

	/**
	 * The programs a command usually runs need nothing beyond the system view: python3,
	 * sh, perl, sha256sum, gzip and a child JVM of the running JDK (its version, and a
	 * source file launched from the working directory).
	 */
	@ParameterizedTest(name = "{0}, nobody={1}")
	@MethodSource("mechanismsAndUsers")
	void programsRunUnchanged(MechanismChoice choice, boolean nobody, @TempDir Path base)
			throws IOException, InterruptedException {
		Path work = workingDirectory(base);
		Path source = Files.writeString(work.resolve("Hello.java"),
				"public class Hello { public static void main(String[] args) { System.out.println(\"hello \" + "
						+ "System.getProperty(\"user.name\")); } }\n");
		Files.setPosixFilePermissions(source, PosixFilePermissions.fromString("rw-r--r--"));
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		String script = "python3 -c 'import json, ssl; print(json.dumps([1 + 1]))'; echo python $?; "
				+ "perl -e 'print 6 * 7, qq(\\n)'; echo perl $?; printf abc | sha256sum; echo sha256sum $?; "
				+ "printf zipped | gzip | gzip -d; echo; echo gzip $?; " + java + " -version 2>&1 | head -1; "
				+ "echo version $?; " + java + " Hello.java; echo hello $?";
		NobodyCommandLines.Run run = run(choice, nobody, base, work, systemView(List.of(), List.of()), script);
		assertThat(run.output()).contains("[2]\npython 0\n", "42\nperl 0\n",
				"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\nsha256sum 0\n",
				"zipped\ngzip 0\n", "version \"" + System.getProperty("java.version") + "\"", "version 0\n",
				"hello nobody\nhello 0\n");
	}

	/**
	 * A command that runs as root itself (a root JVM without a command user, such as one
	 * that may not map ids) owns {@code /etc/shadow} and reads it without any capability:
	 * only the mask keeps it out, and the control with the same view but no mask shows
	 * that it would be read otherwise.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("mechanisms")
	void maskedSecretsStayUnreadableForACommandThatRunsAsRoot(MechanismChoice choice, @TempDir Path base)
			throws IOException, InterruptedException {
		Path work = workingDirectory(base);
		SandboxMechanism verified = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		Launcher root = new Launcher(verified.binaries().get(0), false);
		FilesystemView view = systemView(List.of(), List.of());
		String script = "id -u; head -c 5 /etc/shadow; echo \" shadow $?\"";
		NobodyCommandLines.Run masked = NobodyCommandLines.run(asRoot(verified, root, view)
			.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), false, false), work);
		assertThat(masked.output()).startsWith("0\n").contains(" shadow 1\n").doesNotContain("root:");
		FilesystemView unmasked = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true,
				view.systemDirectories(), view.systemLinks(), List.of(), List.of(), List.of(), List.of());
		NobodyCommandLines.Run control = NobodyCommandLines.run(asRoot(verified, root, unmasked)
			.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), false, false), work);
		assertThat(control.output()).as("control: the same view without its masks").contains("root: shadow 0\n");
	}

	static Stream<MechanismChoice> mechanisms() {
		return Stream.of(MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);
	}

	private static SandboxMechanism asRoot(SandboxMechanism verified, Launcher launcher, FilesystemView view) {
		if (verified instanceof NamespacesMechanism namespaces) {
			return new NamespacesMechanism(namespaces.setpriv(), namespaces.unshare(), launcher, view, 0, 0, true);
		}
		return new SeccompMechanism(launcher, view);
	}

	/** The system view of this host, with listed paths. */
	private static FilesystemView systemView(List<Path> readable, List<Path> writable) throws IOException {
		List<Path> directories = new ArrayList<>();
		Map<Path, Path> links = new LinkedHashMap<>();
		for (Path path : FilesystemView.DEFAULT_SYSTEM_PATHS) {
			if (Files.isSymbolicLink(path)) {
				links.put(path, Files.readSymbolicLink(path));
			}
			else if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
				directories.add(path);
			}
		}
		Path javaHome = Path.of(System.getProperty("java.home")).toRealPath();
		if (directories.stream().noneMatch(javaHome::startsWith)) {
			directories.add(javaHome);
		}
		List<Path> files = new ArrayList<>();
		List<Path> masked = new ArrayList<>();
		for (Path secret : FilesystemView.DEFAULT_SECRET_PATHS) {
			if (Files.isDirectory(secret, LinkOption.NOFOLLOW_LINKS)) {
				masked.add(secret);
			}
			else if (Files.exists(secret, LinkOption.NOFOLLOW_LINKS)) {
				files.add(secret);
			}
		}
		assertThat(files).contains(Path.of("/etc/shadow"));
		return new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true, directories, links, files, masked,
				readable, writable);
	}

	/**
	 * Run the mechanism's raw command line with the view: this JVM's (root, its command
	 * user) or nobody's.
	 */
	private static NobodyCommandLines.Run run(MechanismChoice choice, boolean nobody, Path base, Path work,
			FilesystemView view, String script) throws IOException, InterruptedException {
		SandboxMechanism mechanism = withView(
				nobody ? NobodyCommandLines.mechanism(choice, Files.createDirectories(base.resolve("launcher")))
						: LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build()).mechanism(),
				view);
		List<String> command = mechanism.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), false, false);
		if (nobody) {
			return NobodyCommandLines.run(NobodyCommandLines.asNobody(command), work);
		}
		try (Closeable grant = LinuxMechanisms.forCommandUser(mechanism, work)) {
			return NobodyCommandLines.run(command, work);
		}
	}

	private static SandboxMechanism withView(SandboxMechanism mechanism, FilesystemView view) {
		if (mechanism instanceof NamespacesMechanism namespaces) {
			return new NamespacesMechanism(namespaces.setpriv(), namespaces.unshare(), namespaces.launcher(), view,
					namespaces.uid(), namespaces.gid(), namespaces.keepUid());
		}
		// A root JVM's command on seccomp: uid 65534 (the first of its range is what the
		// probe saw), to which these tests give their directories.
		Launcher launcher = ((SeccompMechanism) mechanism).launcher();
		return new SeccompMechanism(launcher.hasCommandUser()
				? launcher.withCommandUser(SandboxSettings.Linux.DEFAULT_COMMAND_USER) : launcher, view);
	}

	private static Path workingDirectory(Path base) throws IOException {
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path work = Files.createDirectory(base.resolve("work"));
		toCommandUser(work);
		return work;
	}

	/**
	 * Give a directory to uid 65534: nobody, and the command user of a root JVM on both
	 * mechanisms.
	 */
	private static void toCommandUser(Path directory) throws IOException {
		UserPrincipal user = directory.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
		Files.setOwner(directory, user);
	}

}
