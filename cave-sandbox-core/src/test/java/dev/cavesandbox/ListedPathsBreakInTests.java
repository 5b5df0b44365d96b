package dev.cavesandbox;

import java.io.Closeable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A listed path of a filesystem view whose component is swapped for a symbolic link
 * between the JVM's resolution and the wrapper (by anyone who can write its parent: a
 * command of an earlier or concurrent execution with a writable listed path holding it,
 * or another local user). The JVM checked the real path; the command line is built for
 * it; then {@code /srv/X/listed} becomes a link to {@code /srv/X/vault}, whose
 * {@code data} holds a secret (mode 0600 in a 0700 directory for a root JVM, whose
 * command user reaches root's files in its namespace; 0644 for nobody, outside the view).
 * A wrapper that binds by path would show the secret (the control, a command line with
 * the listed binds put back to paths); {@code outer} refuses with exit 125 and its
 * message, and nothing of the vault is bound.
 */
@EnabledOnOs(OS.LINUX)
class ListedPathsBreakInTests {

	static Stream<Arguments> mechanismsAndUsers() {
		return Stream.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE)
			.flatMap((choice) -> Stream.of(Arguments.of(choice, false), Arguments.of(choice, true)));
	}

	@ParameterizedTest(name = "{0}, nobody: {1}")
	@MethodSource("mechanismsAndUsers")
	void listedPathSwappedForALinkAfterTheJvmResolvedItIsRefused(MechanismChoice choice, boolean nobody,
			@TempDir Path work, @TempDir Path launcherDirectory) throws Exception {
		Path root = Path.of("/srv", "cave-i13-fds-" + UUID.randomUUID());
		Path listed = root.resolve("listed");
		Path data = Files.createDirectories(listed.resolve("data"));
		Path vault = root.resolve("vault");
		Path secret = Files.createDirectories(vault.resolve("data")).resolve("key");
		try {
			Files.writeString(data.resolve("public"), "public\n");
			Files.writeString(secret, "vault secret\n");
			Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString(nobody ? "rw-r--r--" : "rw-------"));
			Files.setPosixFilePermissions(vault, PosixFilePermissions.fromString(nobody ? "rwxr-xr-x" : "rwx------"));
			if (nobody) {
				NobodyCommandLines.giveToNobody(work);
			}
			SandboxMechanism verified = nobody ? NobodyCommandLines.mechanism(choice, launcherDirectory)
					: LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build()).mechanism();
			// The JVM resolved the real path, and the command line is built for it.
			SandboxMechanism mechanism = verified.withPaths(List.of(data.toRealPath()), List.of());
			String script = "cat " + data + "/public " + data + "/key 2>&1; ls " + data;
			List<String> command = mechanism.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), false);
			if (nobody) {
				command = NobodyCommandLines.asNobody(command);
			}
			try (Closeable grant = LinuxMechanisms.forCommandUser(mechanism, work)) {
				NobodyCommandLines.Run before = NobodyCommandLines.run(command, work);
				assertThat(before.exitCode()).as(before.output()).isZero();
				assertThat(before.output()).as(before.output()).contains("public\n").doesNotContain("vault secret");
				// The swap: a writer of /srv/X makes "listed" a link to the vault.
				Files.move(listed, root.resolve("listed-real"));
				Files.createSymbolicLink(listed, vault);
				NobodyCommandLines.Run byPath = NobodyCommandLines.run(bindingByPath(mechanism, command), work);
				assertThat(byPath.output()).as("a wrapper that binds the path: " + byPath.output())
					.contains("vault secret");
				NobodyCommandLines.Run after = NobodyCommandLines.run(command, work);
				assertThat(after.exitCode()).as(after.output()).isEqualTo(LauncherContract.SETUP_FAILED);
				assertThat(after.output()).as(after.output())
					.contains(LauncherContract.MESSAGE_PREFIX + " cannot open the listed path " + data
							+ " without following symbolic links: ")
					.doesNotContain("vault secret")
					.doesNotContain("public");
			}
		}
		finally {
			DirectoryTrees.delete(root);
		}
	}

	/**
	 * The component swapped later, after {@code outer} opened the path and before the
	 * wrapper mounts it (a shell in front of the wrapper makes the swap there): bwrap
	 * mounts the descriptor's file where it now lies ({@code /proc/self/fd/N} resolved)
	 * and checks the mount's device and inode against the descriptor's, so the command
	 * sees the directory {@code outer} opened; the launcher's root (unshare) binds the
	 * path, finds the mount is not the descriptor's file and stops before the command
	 * runs. Either way nothing of the vault is shown.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void listedPathSwappedAfterOuterOpenedItIsRefusedByTheWrapper(MechanismChoice choice, @TempDir Path work)
			throws Exception {
		Path root = Path.of("/srv", "cave-i13-fds-" + UUID.randomUUID());
		Path listed = root.resolve("listed");
		Path data = Files.createDirectories(listed.resolve("data"));
		Files.writeString(data.resolve("public"), "public\n");
		Path vault = root.resolve("vault");
		Files.writeString(Files.createDirectories(vault.resolve("data")).resolve("key"), "vault secret\n");
		try {
			SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
				.mechanism()
				.withPaths(List.of(data), List.of());
			List<String> command = new ArrayList<>(mechanism
				.commandLine(List.of("/bin/sh", "-c", "cat " + data + "/key; ls " + data), work.toRealPath(), false));
			command.addAll(command.indexOf("--") + 1,
					List.of("/bin/sh", "-c", "mv \"$0\" \"$0\"-real && ln -s \"$1\" \"$0\" && shift && exec \"$@\"",
							listed.toString(), vault.toString()));
			NobodyCommandLines.Run run = NobodyCommandLines.run(command, work);
			assertThat(Files.isSymbolicLink(listed)).isTrue();
			assertThat(run.output()).as(run.output()).doesNotContain("vault secret");
			if (choice == MechanismChoice.BWRAP) {
				assertThat(run.output()).as(run.output()).contains("public").doesNotContain("\nkey");
			}
			else {
				assertThat(run.exitCode()).as(run.output()).isEqualTo(LauncherContract.SETUP_FAILED);
				assertThat(run.output()).as(run.output())
					.contains(LauncherContract.MESSAGE_PREFIX + " the listed path " + data
							+ " is not the one the launcher opened")
					.contains(LauncherContract.NOT_SET_UP);
			}
		}
		finally {
			DirectoryTrees.delete(root);
		}
	}

	/**
	 * The executor reports the launcher's refusal of a listed path of the settings,
	 * resolved when the executor was built and swapped since, as a launch failure that
	 * names the path.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void executorReportsASwappedListedPathAsALaunchFailure(MechanismChoice choice) throws Exception {
		Path root = Path.of("/srv", "cave-i13-fds-" + UUID.randomUUID());
		Path listed = root.resolve("listed");
		Path data = Files.createDirectories(listed.resolve("data"));
		Path vault = root.resolve("vault");
		Files.writeString(Files.createDirectories(vault.resolve("data")).resolve("key"), "vault secret\n");
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.readablePaths(List.of(data)))) {
			assertThat(executor.execute(ExecutionRequest.builder("ls", data.toString()).build()).exitCode()).isZero();
			Files.move(listed, root.resolve("listed-real"));
			Files.createSymbolicLink(listed, vault);
			assertThatExceptionOfType(SandboxLaunchException.class)
				.isThrownBy(() -> executor.execute(ExecutionRequest.builder("cat", data + "/key").build()))
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo(SandboxLaunchException.CODE))
				.withMessageContaining("cannot open the listed path " + data + " without following symbolic links")
				.withMessageNotContaining("vault secret");
		}
		finally {
			DirectoryTrees.delete(root);
		}
	}

	static Stream<MechanismChoice> mechanisms() {
		return Stream.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE);
	}

	/**
	 * The command line as the wrapper ran it before the listed paths went through
	 * descriptors: {@code outer} without {@code --listed}, bwrap's {@code --bind-fd N P}
	 * back to {@code --bind P P}, the launcher root's {@code --bind-listed N:P:ro} to
	 * {@code --system P}, which it binds by its path without any check.
	 */
	private static List<String> bindingByPath(SandboxMechanism mechanism, List<String> command) {
		List<String> old = new ArrayList<>();
		for (int i = 0; i < command.size(); i++) {
			String argument = command.get(i);
			if (argument.equals("--listed")) {
				i++;
			}
			else if (mechanism instanceof BubblewrapMechanism
					&& (argument.equals("--bind-fd") || argument.equals("--ro-bind-fd"))
					&& !command.get(i + 1).equals(String.valueOf(LauncherContract.DIRECTORY_FD))) {
				old.addAll(List.of(argument.replace("-fd", ""), command.get(i + 2), command.get(i + 2)));
				i += 2;
			}
			else if (mechanism instanceof UnshareMechanism && argument.equals("--bind-listed")) {
				// The launcher's root binds a system directory by its path, unchecked.
				String listed = command.get(i + 1);
				old.addAll(List.of("--system", listed.substring(listed.indexOf(':') + 1, listed.length() - 3)));
				i++;
			}
			else {
				old.add(argument);
			}
		}
		return old;
	}

}
