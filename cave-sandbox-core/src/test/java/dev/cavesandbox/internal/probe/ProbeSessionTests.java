package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class ProbeSessionTests {

	/**
	 * The command runs in a new directory of the work directory, which holds the marker
	 * and takes a write, and which is gone once the checks are done.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void checksRunInADirectoryWithTheMarkerThatIsDeletedAfterwards(MechanismChoice choice, @TempDir Path workDirectory)
			throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		SandboxSettings settings = SandboxSettings.builder().mechanism(choice).workDirectory(workDirectory).build();
		List<ProcessRunner.Outcome> outcomes = new ArrayList<>();
		IsolationCapability verdict = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			outcomes.add(session.run(mechanism, List.of("/bin/sh", "-c",
					"cat " + ProbeSession.MARKER_FILE + "; echo; echo ok > " + ProbeSession.WRITE_FILE + " && pwd"),
					false, false));
			return ProbeSession.notVerified("checked", session.took());
		});
		assertThat(verdict.detail()).isEqualTo("checked");
		assertThat(outcomes).singleElement().satisfies((outcome) -> {
			String stdout = new String(outcome.stdout(), StandardCharsets.UTF_8);
			assertThat(outcome.exitCode()).as(stdout + new String(outcome.stderr(), StandardCharsets.UTF_8)).isZero();
			List<String> lines = stdout.lines().toList();
			assertThat(lines).hasSize(2);
			assertThat(lines.get(0)).isEqualTo(ProbeSession.MARKER);
			assertThat(lines.get(1)).startsWith(workDirectory.toRealPath() + "/cave-sandbox-probe-")
				.endsWith("/" + ProbeSession.WORKING_DIRECTORY);
		});
		assertThat(workDirectory).isEmptyDirectory();
	}

	@Test
	void aWorkDirectoryThatCannotBeCreatedInIsNamedAndNoCheckRuns(@TempDir Path directory) throws Exception {
		Path missing = directory.resolve("missing");
		SandboxSettings settings = SandboxSettings.builder().workDirectory(missing).build();
		List<ProbeSession> sessions = new ArrayList<>();
		IsolationCapability verdict = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			sessions.add(session);
			return ProbeSession.notVerified("checked", session.took());
		});
		assertThat(sessions).isEmpty();
		assertThat(verdict.cause()).isEqualTo(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE);
		assertThat(verdict.detail()).startsWith("could not create the probe's working directory: the work directory "
				+ missing + " (workDirectory) does not exist: ");
		assertThat(missing).doesNotExist();
	}

	/**
	 * A launcher (the first binary of the command line) that is gone by the time it runs:
	 * the launch error names the cause, and the directory is deleted all the same.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void aWrapperThatCannotBeStartedIsJudgedByItsErrorAndTheDirectoryIsDeleted(@TempDir Path directory)
			throws IOException, InterruptedException {
		Path workDirectory = Files.createDirectory(directory.resolve("work"));
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"),
				new Launcher(directory.resolve("cave-sandbox-launcher"), false), FilesystemView.of(List.of(), true));
		SandboxSettings settings = SandboxSettings.builder().workDirectory(workDirectory).build();
		IsolationCapability verdict = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			session.run(mechanism, List.of("/bin/true"), false, false);
			return ProbeSession.notVerified("the wrapper ran", session.took());
		});
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(UnavailabilityCause.BINARY_MISSING);
		assertThat(verdict.detail()).contains(directory.resolve("cave-sandbox-launcher").toString())
			.containsPattern("error(=|: )2\\b");
		assertThat(workDirectory).isEmptyDirectory();
	}

	/**
	 * A working directory that is missing when the launcher (there, executable) is
	 * started, as when another user swaps the session's directory away and back around
	 * the launch: the verdict names the working directory and the fix, not the launcher
	 * as missing.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void aWorkingDirectoryMissingAtTheStartIsNamedNotTheLauncher(@TempDir Path directory) throws Exception {
		Path workDirectory = Files.createDirectory(directory.resolve("work"));
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"),
				new Launcher(Path.of("/bin/true"), false), FilesystemView.of(List.of(), true));
		SandboxSettings settings = SandboxSettings.builder().workDirectory(workDirectory).build();
		IsolationCapability verdict = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			Files.delete(session.directory().resolve(ProbeSession.MARKER_FILE));
			Files.delete(session.directory());
			session.run(mechanism, List.of("/bin/true"), false, false);
			return ProbeSession.notVerified("the wrapper ran", session.took());
		});
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(verdict.detail()).contains("was replaced: its working directory ",
				" was missing when true was started");
		assertThat(workDirectory).isEmptyDirectory();
	}

	/**
	 * The probe script's child reports the device and inode of the directory it runs in
	 * ({@code dir=}): its own working directory's passes, another directory's, or none,
	 * is the session's directory named as replaced.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void aChildThatRanInAnotherDirectoryThanTheWorkingDirectoryIsNamed(@TempDir Path workDirectory) throws Exception {
		SandboxSettings settings = SandboxSettings.builder().workDirectory(workDirectory).build();
		List<String> checked = new ArrayList<>();
		IsolationCapability verdict = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			Map<String, Object> own = Files.readAttributes(session.directory(), "unix:dev,ino");
			session.checkRanHere(report("dir=" + own.get("dev") + ":" + own.get("ino")));
			checked.add("own");
			session.checkRanHere(report("marker=" + ProbeSession.MARKER));
			return ProbeSession.notVerified("accepted a report without dir", session.took());
		});
		assertThat(checked).containsExactly("own");
		assertThat(verdict.detail()).contains("was replaced: the command ran in the directory of device:inode "
				+ "(not reported), not in its working directory ");
		IsolationCapability other = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			Map<String, Object> root = Files.readAttributes(Path.of("/"), "unix:dev,ino");
			session.checkRanHere(report("dir=" + root.get("dev") + ":" + root.get("ino")));
			return ProbeSession.notVerified("accepted another directory", session.took());
		});
		assertThat(other.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(other.detail()).contains("was replaced: the command ran in the directory of device:inode ");
	}

	private static ProcessRunner.Outcome report(String stdout) {
		return new ProcessRunner.Outcome(0, stdout.getBytes(StandardCharsets.UTF_8), new byte[0], false, false, false,
				Duration.ZERO, List.of(), true);
	}

	/**
	 * With the preload library, a mechanism without a mount namespace runs the command as
	 * an execution's: the library as {@code LD_PRELOAD} and a writable directory of its
	 * own beside the working directory as {@code CAVE_SANDBOX_SHM}, deleted with the
	 * session; the mechanisms with a mount namespace (a private {@code /dev/shm}) get
	 * neither.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void withThePreloadLibraryTheMechanismsWithoutMountsGetAnExecutionsSharedMemory(MechanismChoice choice,
			@TempDir Path workDirectory) throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		SandboxSettings settings = SandboxSettings.builder().mechanism(choice).workDirectory(workDirectory).build();
		Path library = SharedMemoryPreload.shared().resolve(workDirectory);
		if (mechanism instanceof SeccompMechanism seccomp && seccomp.commandGroup() >= 0) {
			// as the probe does for a command user of the host
			PrivateHome.makeSearchable(PrivateHome.of(workDirectory));
		}
		List<String> lines = new ArrayList<>();
		List<String> errors = new ArrayList<>();
		ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			session.preload(library);
			ProcessRunner.Outcome outcome = session.run(mechanism,
					List.of("/bin/sh", "-c", "echo \"preload=$LD_PRELOAD\"; echo \"shm=$CAVE_SANDBOX_SHM\"; "
							+ "echo x > \"$CAVE_SANDBOX_SHM/object\" && echo written"),
					false, false);
			lines.addAll(new String(outcome.stdout(), StandardCharsets.UTF_8).lines().toList());
			errors.add(new String(outcome.stderr(), StandardCharsets.UTF_8));
			return ProbeSession.notVerified("checked", session.took());
		});
		if (mechanism.namespaces().contains(LinuxNamespace.MOUNT)) {
			assertThat(lines).startsWith("preload=", "shm=");
		}
		else {
			assertThat(lines).as("%s", errors).hasSize(3);
			assertThat(lines.get(0)).isEqualTo("preload=" + library);
			assertThat(lines.get(1)).startsWith("shm=" + workDirectory.toRealPath() + "/cave-sandbox-probe-")
				.endsWith(ProbeSession.SHARED_MEMORY_SUFFIX);
			assertThat(lines.get(2)).isEqualTo("written");
		}
		try (Stream<Path> left = Files.list(workDirectory)) {
			assertThat(left.map((path) -> path.getFileName().toString()))
				.noneMatch((name) -> name.startsWith("cave-sandbox-probe-"));
		}
	}

	/**
	 * A shared-memory directory that is already there when the session needs it (put
	 * there by root, the only other user who can, open to all) is never taken over; the
	 * run fails instead, and the planted directory is left as it was (the session deletes
	 * its whole directory afterwards).
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void aSharedMemoryDirectoryPlantedBeforeTheRunIsNotTakenOver(@TempDir Path workDirectory) throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms
			.verified(SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).build())
			.mechanism();
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.SECCOMP)
			.workDirectory(workDirectory)
			.build();
		// passable for a command user of the host, as /tmp is
		Files.setPosixFilePermissions(workDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path library = SharedMemoryPreload.shared().resolve(workDirectory);
		PrivateHome.makeSearchable(PrivateHome.of(workDirectory));
		List<String> afterRun = new ArrayList<>();
		IsolationCapability verdict = ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			session.preload(library);
			try (Stream<Path> entries = Files.list(workDirectory)) {
				Path own = entries.filter((path) -> path.getFileName().toString().startsWith("cave-sandbox-probe-"))
					.findFirst()
					.orElseThrow();
				Path plant = Files
					.createDirectory(own.resolve(ProbeSession.WORKING_DIRECTORY + ProbeSession.SHARED_MEMORY_SUFFIX));
				Files.setPosixFilePermissions(plant, PosixFilePermissions.fromString("rwxrwxrwx"));
				Path planted = Files.writeString(plant.resolve("planted"), "someone else's");
				try {
					session.run(mechanism, List.of("/bin/true"), false, false);
				}
				finally {
					afterRun.add(Files.readString(planted) + " "
							+ PosixFilePermissions.toString(Files.getPosixFilePermissions(plant)) + " "
							+ Files.getAttribute(plant, "unix:gid"));
				}
			}
			return ProbeSession.notVerified("ran", session.took());
		});
		assertThat(verdict.detail()).as("%s", verdict).isNotEqualTo("ran");
		assertThat(afterRun)
			.containsExactly("someone else's rwxrwxrwx " + Files.getAttribute(workDirectory, "unix:gid"));
	}

	/**
	 * The working directory and the names beside it lie in a directory of the session's
	 * own, mode 0700, the only entry the session makes in the work directory, always the
	 * JVM user's; for a command user of the seccomp mechanism (a root JVM's) it is 0711
	 * during the run, and the directory of the write outside beside the working directory
	 * is the command uid's to write during the run, so that only the sandbox keeps the
	 * command from creating a file there.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void theWorkingDirectoryLiesInADirectoryOfTheSessionsOwnThatNoOtherUserEnters(MechanismChoice choice,
			@TempDir Path workDirectory) throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		SandboxSettings settings = SandboxSettings.builder().mechanism(choice).workDirectory(workDirectory).build();
		// passable for a command user of the host, as /tmp is
		Files.setPosixFilePermissions(workDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
		long jvmUid = (Integer) Files.getAttribute(workDirectory, "unix:uid");
		long commandUid = (mechanism instanceof SeccompMechanism seccomp && seccomp.launcher().hasCommandUser())
				? seccomp.launcher().commandUser() : jvmUid;
		List<String> seen = new ArrayList<>();
		ProbeSession.verify(settings, System.nanoTime(), (session) -> {
			try (Stream<Path> entries = Files.list(workDirectory)) {
				Path own = entries.collect(Collectors.toList()).get(0);
				seen.add(PosixFilePermissions.toString(Files.getPosixFilePermissions(own)));
				ProcessRunner.Outcome outcome = session.run(mechanism,
						List.of("/bin/sh", "-c",
								"stat -c '%u %a' .. 2>&1; pwd; (echo x > ../work.outside/x) 2>/dev/null "
										+ "&& echo outside=written || echo outside=refused"),
						false, false);
				seen.addAll(new String(outcome.stdout(), StandardCharsets.UTF_8).lines().toList());
				seen.add(String.valueOf(Files.getAttribute(own, "unix:uid")));
				try (Stream<Path> all = Files.list(workDirectory)) {
					seen.add(String.valueOf(all.count()));
				}
			}
			return ProbeSession.notVerified("checked", session.took());
		});
		assertThat(seen.get(0)).isEqualTo("rwx------");
		assertThat(seen).as("%s", seen)
			.anyMatch((line) -> line.endsWith("/" + ProbeSession.WORKING_DIRECTORY))
			.endsWith(String.valueOf(jvmUid), "1");
		if (!mechanism.namespaces().contains(LinuxNamespace.MOUNT)) {
			// the host's directory itself, which only Landlock keeps the command from
			// writing
			// (a user namespace may show the JVM's uid as another)
			assertThat(seen.get(1)).as("%s", seen)
				.isEqualTo((commandUid != jvmUid) ? jvmUid + " 701" : seen.get(1).split(" ")[0] + " 700");
			assertThat(seen).as("%s", seen).contains("outside=refused");
		}
		assertThat(workDirectory).isEmptyDirectory();
	}

}
