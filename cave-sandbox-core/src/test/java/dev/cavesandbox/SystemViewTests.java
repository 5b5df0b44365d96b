package dev.cavesandbox;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The system view of the two mechanisms with a mount namespace, on the real kernel: the
 * raw command line of {@code bwrap} and {@code unshare} with a system view built from
 * this host, run by this (root) JVM, whose commands run as the command user, and by an
 * unprivileged user ({@link NobodyCommandLines}). Files of the host outside the view do
 * not exist inside until listed; common programs run unchanged.
 */
@EnabledOnOs(OS.LINUX)
class SystemViewTests {

	private static final Path SHADOW = Path.of("/etc/shadow");

	static Stream<Arguments> mechanismsAndUsers() {
		return Stream.of(Arguments.of(MechanismChoice.BWRAP, false), Arguments.of(MechanismChoice.BWRAP, true),
				Arguments.of(MechanismChoice.UNSHARE, false), Arguments.of(MechanismChoice.UNSHARE, true));
	}

	/**
	 * A file in {@code /srv} and one in the home directory (the JVM's {@code /root}, or a
	 * directory of nobody's in {@code /home} for nobody), both mode 644, do not exist
	 * inside, nor does a link in the working directory reveal them or {@code /root};
	 * {@code /etc/shadow} reads as empty; the working directory stays writable. Listed,
	 * the readable files are read (not written), and a writable directory is written.
	 */
	@ParameterizedTest(name = "{0}, nobody: {1}")
	@MethodSource("mechanismsAndUsers")
	void hostFilesOutsideTheViewDoNotExistUntilListed(MechanismChoice choice, boolean nobody, @TempDir Path work,
			@TempDir Path launcherDirectory, @TempDir Path writable) throws Exception {
		String name = "cave-i13-" + UUID.randomUUID();
		Path srv = Path.of("/srv", name);
		Path homeDirectory = nobody ? Path.of("/home", name) : Path.of(System.getProperty("user.home"), name);
		Path home = homeDirectory.resolve("secret");
		try {
			Files.writeString(srv, "srv secret\n");
			Files.createDirectory(homeDirectory);
			Files.writeString(home, "home secret\n");
			for (Path file : List.of(srv, home)) {
				Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
			}
			Files.setPosixFilePermissions(homeDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
			Files.setPosixFilePermissions(writable, PosixFilePermissions.fromString("rwxrwxrwx"));
			if (nobody) {
				NobodyCommandLines.giveToNobody(work);
			}
			Files.createSymbolicLink(work.resolve("to-srv"), srv);
			Files.createSymbolicLink(work.resolve("to-root"), Path.of("/root"));
			String script = "for f in " + srv + " " + home + " to-srv to-root/" + name + "/secret " + SHADOW
					+ "; do if c=$(cat $f 2>&1); then echo \"read $f: $c.\"; else echo \"unreadable $f\"; fi; done\n"
					+ "for d in /srv /home /root to-root " + homeDirectory
					+ "; do if [ -e $d ]; then echo \"exists $d\"; else echo \"absent $d\"; fi; done\n"
					+ "echo work > out && cat out\n" + "echo more >> " + srv + " || echo \"read-only " + srv + "\"\n"
					+ "echo new > " + writable + "/new && echo \"wrote " + writable + "\"\n";
			NobodyCommandLines.Run hidden = run(choice, nobody, view(List.of(), List.of()), script, work,
					launcherDirectory);
			assertThat(hidden.output()).as(hidden.output())
				.contains("unreadable " + srv, "unreadable " + home, "unreadable to-srv",
						"unreadable to-root/" + name + "/secret", "read " + SHADOW + ": .", "absent /srv",
						"absent /home", "absent /root", "absent to-root", "absent " + homeDirectory, "\nwork\n")
				.doesNotContain("srv secret", "home secret")
				.doesNotContain("wrote ");
			assertThat(Files.readString(work.resolve("out"))).isEqualTo("work\n");
			NobodyCommandLines.Run listed = run(choice, nobody, view(List.of(srv, home), List.of(writable)), script,
					work, launcherDirectory);
			assertThat(listed.output()).as(listed.output())
				.contains("read " + srv + ": srv secret.", "read " + home + ": home secret.",
						"read to-srv: srv secret.", "read " + SHADOW + ": .", "read-only " + srv, "wrote " + writable);
			assertThat(Files.readString(srv)).isEqualTo("srv secret\n");
			assertThat(Files.readString(writable.resolve("new"))).isEqualTo("new\n");
		}
		finally {
			Files.deleteIfExists(srv);
			Files.deleteIfExists(home);
			Files.deleteIfExists(homeDirectory);
		}
	}

	/**
	 * What programs need from the host: sh, python3, perl, sha256sum, gzip and a child
	 * JVM (the running JDK's {@code java -version}, and a single-file program in the
	 * working directory) run in the system view as on the host.
	 */
	@ParameterizedTest(name = "{0}, nobody: {1}")
	@MethodSource("mechanismsAndUsers")
	void programsRunUnchangedInTheSystemView(MechanismChoice choice, boolean nobody, @TempDir Path work,
			@TempDir Path launcherDirectory) throws Exception {
		Files.writeString(work.resolve("data"), "cave\n");
		Files.writeString(work.resolve("Hello.java"),
				"class Hello { public static void main(String[] a) { System.out.println(\"hello \" + a[0]); } }\n");
		if (nobody) {
			NobodyCommandLines.giveToNobody(work);
		}
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		String script = "sh -c 'echo sh ok'\n" + "python3 -c 'import ssl, json; print(\"python ok\")'\n"
				+ "perl -MPOSIX -e 'print \"perl ok\\n\"'\n" + "sha256sum data\n" + "gzip -c data | gzip -dc\n" + java
				+ " -version 2>&1 | head -1\n" + java + " Hello.java jvm\n";
		NobodyCommandLines.Run run = run(choice, nobody, view(List.of(), List.of()), script, work, launcherDirectory);
		assertThat(run.output()).as(run.output())
			.contains("sh ok\n", "python ok\n", "perl ok\n",
					HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest("cave\n".getBytes()))
							+ "  data\n",
					"cave\n", "version \"" + System.getProperty("java.version") + "\"", "hello jvm\n");
		assertThat(run.exitCode()).as(run.output()).isZero();
	}

	/**
	 * Return a system view of this host, as the settings would build it: the default
	 * system paths that exist (a symbolic link among them becomes a link), the default
	 * secrets that exist, the default hidden directories, and the listed paths.
	 */
	static FilesystemView view(List<Path> readable, List<Path> writable) throws IOException {
		List<Path> directories = new ArrayList<>();
		Map<Path, Path> links = new LinkedHashMap<>();
		for (Path path : FilesystemView.DEFAULT_SYSTEM_PATHS) {
			if (Files.isSymbolicLink(path)) {
				links.put(path, Files.readSymbolicLink(path));
			}
			else if (Files.isDirectory(path)) {
				directories.add(path);
			}
		}
		List<Path> files = new ArrayList<>();
		List<Path> maskedDirectories = new ArrayList<>();
		for (Path secret : FilesystemView.DEFAULT_SECRET_PATHS) {
			if (Files.isDirectory(secret)) {
				maskedDirectories.add(secret);
			}
			else if (Files.exists(secret)) {
				files.add(secret);
			}
		}
		List<Path> hidden = new ArrayList<>();
		for (Path directory : SandboxSettings.DEFAULT_HIDDEN_DIRECTORIES) {
			if (Files.isDirectory(directory)) {
				hidden.add(directory.toRealPath());
			}
		}
		List<Path> realReadable = new ArrayList<>();
		for (Path path : readable) {
			realReadable.add(path.toRealPath());
		}
		List<Path> realWritable = new ArrayList<>();
		for (Path path : writable) {
			realWritable.add(path.toRealPath());
		}
		return new FilesystemView(FilesystemView.Kind.SYSTEM, FilesystemView.outermost(hidden), true, directories,
				links, files, maskedDirectories, realReadable, realWritable);
	}

	/**
	 * Run {@code sh -c script} through the raw command line of the mechanism's verified
	 * mechanism with the given view, by this JVM or by nobody.
	 */
	private static NobodyCommandLines.Run run(MechanismChoice choice, boolean nobody, FilesystemView view,
			String script, Path work, Path launcherDirectory) throws Exception {
		SandboxMechanism verified = nobody ? NobodyCommandLines.mechanism(choice, launcherDirectory)
				: LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build()).mechanism();
		SandboxMechanism mechanism = withView(verified, view);
		List<String> command = mechanism.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), false);
		if (nobody) {
			command = NobodyCommandLines.asNobody(command);
		}
		try (Closeable grant = LinuxMechanisms.forCommandUser(mechanism, work)) {
			long start = System.nanoTime();
			NobodyCommandLines.Run run = NobodyCommandLines.run(command, work);
			System.out.printf("%s nobody=%s: %d ms%n", choice, nobody, (System.nanoTime() - start) / 1_000_000);
			return run;
		}
	}

	private static SandboxMechanism withView(SandboxMechanism mechanism, FilesystemView view) {
		if (mechanism instanceof BubblewrapMechanism bwrap) {
			return new BubblewrapMechanism(bwrap.bwrap(), bwrap.launcher(), view);
		}
		UnshareMechanism unshare = (UnshareMechanism) mechanism;
		return new UnshareMechanism(unshare.setpriv(), unshare.unshare(), unshare.launcher(), view, unshare.uid(),
				unshare.gid(), unshare.keepUid());
	}

}
