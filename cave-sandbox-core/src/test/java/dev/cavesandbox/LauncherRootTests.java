package dev.cavesandbox;

import java.io.Closeable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's {@code root} mode, the unshare mechanism's PID 1, on the real kernel:
 * what its mounts leave the command, read from inside ({@code /proc/self/mountinfo}), by
 * this (root) JVM and by nobody ({@link NobodyCommandLines}), in a system view and in a
 * host view with a read-only root: every mount is read-only but the kept ones, the
 * kernel's key lists read as empty, a root caller's {@code /proc/sys} is read-only,
 * {@code lo} is up only where a private loopback is asked for.
 */
@EnabledOnOs(OS.LINUX)
class LauncherRootTests {

	private static final String MOUNTS = "cat /proc/self/mountinfo; echo keys=$(wc -c < /proc/keys)\n";

	private static final List<String> PSEUDO_BELOW_SYS = List.of("sysfs", "cgroup", "cgroup2", "securityfs", "debugfs",
			"tracefs", "pstore", "bpf", "configfs", "fusectl", "efivarfs", "selinuxfs", "binfmt_misc", "hugetlbfs",
			"mqueue", "autofs");

	static Stream<Arguments> viewsAndUsers() {
		return Stream.of(Arguments.of(true, false), Arguments.of(true, true), Arguments.of(false, false),
				Arguments.of(false, true));
	}

	@ParameterizedTest(name = "system view: {0}, nobody: {1}")
	@MethodSource("viewsAndUsers")
	void everyMountIsReadOnlyButTheKeptOnesAndTheKeyListsAreMasked(boolean system, boolean nobody, @TempDir Path work,
			@TempDir Path launcherDirectory, @TempDir Path writable, @TempDir Path readable) throws Exception {
		Path readableFile = Files.writeString(readable.resolve("data"), "data\n");
		Files.setPosixFilePermissions(writable, PosixFilePermissions.fromString("rwxrwxrwx"));
		FilesystemView view = system ? SystemViewTests.view(List.of(readableFile), List.of(writable))
				: hostView(List.of(readableFile), List.of(writable));
		NobodyCommandLines.Run run = run(view, nobody, false, MOUNTS, work, launcherDirectory);
		assertThat(run.exitCode()).as(run.output()).isZero();
		List<String> kept = new ArrayList<>();
		List<String> readOnly = new ArrayList<>();
		for (String line : run.output().lines().filter((line) -> line.contains(" - ")).toList()) {
			String[] fields = line.substring(0, line.indexOf(" - ")).split(" ");
			String point = decode(fields[4]);
			String type = line.substring(line.indexOf(" - ") + 3).split(" ")[0];
			if (fields[5].equals("ro") || fields[5].startsWith("ro,")) {
				readOnly.add(point);
			}
			else {
				assertThat(kept(point, type, view, work.toRealPath()))
					.as("writable mount %s in%n%s", point, run.output())
					.isTrue();
				kept.add(point);
			}
		}
		assertThat(kept).contains(work.toRealPath().toString(), writable.toRealPath().toString(), "/tmp");
		assertThat(readOnly).contains(readableFile.toRealPath().toString(), "/proc/keys");
		if (system) {
			assertThat(readOnly).contains("/", "/usr", "/etc", "/dev");
		}
		else {
			assertThat(readOnly).contains("/");
		}
		if (!nobody) {
			// A root JVM: its uid 0 is the host's.
			assertThat(readOnly).contains("/proc/sys");
		}
		else {
			assertThat(readOnly).doesNotContain("/proc/sys");
		}
		assertThat(run.output()).contains("keys=0\n");
	}

	@ParameterizedTest(name = "nobody: {0}")
	@ValueSource(booleans = { false, true })
	void loopbackIsUpOnlyWhereAskedFor(boolean nobody, @TempDir Path work, @TempDir Path launcherDirectory)
			throws Exception {
		String script = "grep -c 'lo$' /proc/net/if_inet6 || true; python3 -c 'import socket; s = socket.socket(); "
				+ "s.bind((\"127.0.0.1\", 0)); s.listen(); c = socket.create_connection(s.getsockname()); "
				+ "print(\"loopback up\")' 2>&1 | tail -1\n";
		FilesystemView view = SystemViewTests.view(List.of(), List.of());
		NobodyCommandLines.Run up = run(view, nobody, true, script, work, launcherDirectory);
		assertThat(up.output()).as(up.output()).contains("loopback up");
		NobodyCommandLines.Run down = run(view, nobody, false, script, work, launcherDirectory);
		assertThat(down.output()).as(down.output()).doesNotContain("loopback up");
	}

	/** The host view with the hidden directories and listed paths of the system view. */
	private static FilesystemView hostView(List<Path> readable, List<Path> writable) throws Exception {
		FilesystemView system = SystemViewTests.view(readable, writable);
		return new FilesystemView(FilesystemView.Kind.HOST, system.hiddenDirectories(), true, List.of(), Map.of(),
				List.of(), List.of(), system.readablePaths(), system.writablePaths());
	}

	/**
	 * The mounts that stay writable (the launcher's read-only pass says which and why).
	 */
	private static boolean kept(String point, String type, FilesystemView view, Path work) {
		Path path = Path.of(point);
		return path.startsWith("/proc") || point.equals("/dev/pts")
				|| (path.startsWith("/sys") && !point.equals("/sys") && PSEUDO_BELOW_SYS.contains(type))
				|| path.startsWith(work) || view.hiddenDirectories().stream().anyMatch(path::startsWith)
				|| view.writablePaths().contains(path) || view.maskedFiles().contains(path);
	}

	private static String decode(String field) {
		StringBuilder decoded = new StringBuilder();
		for (int i = 0; i < field.length(); i++) {
			if (field.charAt(i) == '\\' && i + 3 < field.length()) {
				decoded.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
				i += 3;
			}
			else {
				decoded.append(field.charAt(i));
			}
		}
		return decoded.toString();
	}

	private static NobodyCommandLines.Run run(FilesystemView view, boolean nobody, boolean loopback, String script,
			Path work, Path launcherDirectory) throws Exception {
		SandboxMechanism verified = nobody ? NobodyCommandLines.mechanism(MechanismChoice.UNSHARE, launcherDirectory)
				: LinuxMechanisms.verified(SandboxSettings.builder().mechanism(MechanismChoice.UNSHARE).build())
					.mechanism();
		UnshareMechanism unshare = (UnshareMechanism) verified;
		SandboxMechanism mechanism = new UnshareMechanism(unshare.setpriv(), unshare.unshare(), unshare.launcher(),
				view, unshare.uid(), unshare.gid(), unshare.keepUid());
		if (nobody) {
			NobodyCommandLines.giveToNobody(work);
		}
		List<String> command = mechanism.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), loopback);
		if (nobody) {
			command = NobodyCommandLines.asNobody(command);
		}
		try (Closeable grant = LinuxMechanisms.forCommandUser(mechanism, work)) {
			return NobodyCommandLines.run(command, work);
		}
	}

}
