package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;

import dev.cavesandbox.FaultySandboxes.Fault;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.UnavailableIsolatedExecutor;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxExecMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

public class NetworkIsolationProbeTests {

	private static final String MACOS = "Mac OS X";

	private static final Map<String, String> REFUSAL_MESSAGES = Map.of("unshareWithNamespaceLimitZero",
			"unshare: unshare failed: No space left on device", "bwrapWithNamespaceLimitZero",
			"bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)",
			"unshareWithoutCapabilities", "unshare: write failed /proc/self/uid_map: Operation not permitted",
			"bwrapWithoutCapabilities", "bwrap: setting up uid map: Operation not permitted",
			"namespacesWithNamespaceLimitZero", "unshare: unshare failed: No space left on device",
			"namespacesWithoutCapabilities", "unshare: write failed /proc/self/uid_map: Operation not permitted");

	private static final String NONE = "capabilities: none";

	/**
	 * The capabilities fact of a command: none, except for a host root JVM's command user
	 * on the mechanisms with a user namespace.
	 */
	private static String capabilities(MechanismChoice choice) {
		boolean hostRoot = "root".equals(System.getProperty("user.name")) && LinuxProbe.initialUserNamespace();
		if (!hostRoot || choice == MechanismChoice.SECCOMP) {
			return NONE;
		}
		String kept = (choice == MechanismChoice.NAMESPACES) ? "CAP_DAC_OVERRIDE" : "CAP_DAC_OVERRIDE and CAP_FOWNER";
		return "capabilities: " + kept + " only, over files of root:root (the command user's namespace maps no other "
				+ "owner)";
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void autoVerifiesBubblewrapFirstWithEveryFact() {
		IsolationCapability capability = probe(SandboxSettings.defaults());
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.mechanismName()).isEqualTo("bwrap");
		assertThat(capability.mechanism()).isInstanceOf(BubblewrapMechanism.class);
		assertThat(capability.cause()).isNull();
		assertThat(capability.privateLoopback()).isTrue();
		assertThat(capability.verified()).anyMatch((fact) -> fact.startsWith("network namespace net:["))
			.anyMatch((fact) -> fact.startsWith("PID namespace pid:["))
			.anyMatch((fact) -> fact.startsWith("IPC namespace ipc:["))
			.anyMatch((fact) -> fact.startsWith("hidden: /tmp, /var/tmp, /run"))
			.contains("only interface: lo", capabilities(MechanismChoice.BWRAP),
					"working directory: visible and writable", "root filesystem: read-only",
					"loopback: up, private (the host's loopback is another namespace's)");
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void unshareIsVerifiedWithLoopbackDownAndAPrivateLoopbackOnRequest() {
		IsolationCapability capability = probe(SandboxSettings.builder().mechanism(MechanismChoice.UNSHARE).build());
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.mechanismName()).isEqualTo("unshare");
		assertThat(capability.privateLoopback()).isTrue();
		assertThat(capability.verified())
			.contains("only interface: lo", "loopback: down", capabilities(MechanismChoice.UNSHARE),
					"root filesystem: read-only", "private loopback on request: lo up, verified")
			.anyMatch((fact) -> fact.startsWith("IPC namespace ipc:["));
		assertThat(((UnshareMechanism) capability.mechanism()).keepUid()).isTrue();
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void autoFallsBackToUnshareWhereBubblewrapIsMissingAndSaysWhy(@TempDir Path directory) {
		Path missing = directory.resolve("bwrap");
		IsolationCapability capability = probe(SandboxSettings.builder().bwrapPath(missing).build());
		assertThat(capability.mechanismName()).isEqualTo("unshare");
		assertThat(capability.verified())
			.contains("not chosen: bwrap unavailable, BINARY_MISSING (bwrap: " + missing + " does not exist)");
	}

	/**
	 * Under a PID 1 that reaps only what it started (Perl's {@code system}, as a JVM's
	 * process API, in a container without an init), no mechanism leaves a zombie, so auto
	 * prefers bwrap there too: bwrap runs with {@code --as-pid-1}, so that its own init
	 * (which used to outlive bwrap and die as an orphan of the JVM) no longer exists; the
	 * launcher is PID 1 and dies with the namespace. PID 1 counts once nothing else in
	 * its PID namespace is still running: from then on no process is left that could
	 * become a zombie, so a count of 0 is final, whatever the load.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void underAPidOneThatDoesNotReapOrphansNoMechanismLeavesAZombie(MechanismChoice choice, @TempDir Path directory)
			throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		String settle = """
				system(@ARGV) == 0 or die "sandbox failed: $?\n";
				for (1 .. 1200) {
					my @others = grep { $_->[0] != $$ && $_->[2] ne 'ps' } map { [split] } `ps -eo pid=,stat=,comm=`;
					my @zombies = grep { $_->[1] =~ /^Z/ } @others;
					if (@zombies == @others) { print join(' ', map { $_->[2] } @zombies), "\n"; exit 0; }
					select(undef, undef, undef, 0.05);
				}
				die "processes still running after 60 s\n";
				""";
		// A host root JVM's command line stays the host root's (its launcher maps the
		// command user, which a user namespace of root alone would not have).
		List<String> command = new ArrayList<>(List.of("/usr/bin/unshare"));
		if (!"root".equals(System.getProperty("user.name")) || !LinuxProbe.initialUserNamespace()) {
			command.addAll(List.of("--user", "--map-root-user"));
		}
		command.addAll(List.of("--pid", "--fork", "--mount-proc", "perl", "-e", settle));
		command.addAll(mechanism.commandLine(List.of("true"), directory.toRealPath(), false));
		String output;
		try (java.io.Closeable grant = LinuxMechanisms.forCommandUser(mechanism, directory)) {
			Process process = new ProcessBuilder(command).directory(directory.toFile())
				.redirectErrorStream(true)
				.start();
			output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor()).as(output).isZero();
		}
		List<String> zombies = output.lines().findFirst().map((line) -> List.of(line.split(" ", -1))).orElseThrow();
		assertThat(zombies).containsExactly("");
	}

	/**
	 * The command lines that the probe verified as root also isolate a user without
	 * privileges: the same builders, with that user's uid, spawned through setpriv. Each
	 * namespace is checked where the mechanism gives it; without a mount namespace, the
	 * world-writable {@code /tmp} stays in sight and Landlock refuses the write there.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void verifiedCommandLinesAlsoIsolateAnUnprivilegedUser(MechanismChoice choice, @TempDir Path directory)
			throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		// The extracted launcher is root's alone (0500 in a 0700 directory): nobody gets
		// a copy of its own.
		Path work = Files.createDirectory(directory.resolve("work"));
		Path launcherCopy = directory.resolve("cave-sandbox-launcher");
		Launcher launcher = new Launcher(launcherCopy, false);
		if (mechanism instanceof UnshareMechanism unshare) {
			Files.copy(unshare.launcher().path(), launcherCopy);
			mechanism = new UnshareMechanism(unshare.setpriv(), unshare.unshare(), launcher, unshare.filesystem(),
					65534, 65534, true);
		}
		else if (mechanism instanceof BubblewrapMechanism bwrap) {
			Files.copy(bwrap.launcher().path(), launcherCopy);
			mechanism = new BubblewrapMechanism(bwrap.bwrap(), launcher, bwrap.filesystem());
		}
		else if (mechanism instanceof NamespacesMechanism namespaces) {
			Files.copy(namespaces.launcher().path(), launcherCopy);
			mechanism = new NamespacesMechanism(namespaces.setpriv(), namespaces.unshare(), launcher,
					namespaces.filesystem(), 65534, 65534, true);
		}
		else if (mechanism instanceof SeccompMechanism seccomp) {
			Files.copy(seccomp.launcher().path(), launcherCopy);
			mechanism = new SeccompMechanism(launcher, seccomp.filesystem());
		}
		Set<LinuxNamespace> given = mechanism.namespaces();
		Files.setPosixFilePermissions(launcherCopy, PosixFilePermissions.fromString("r-xr-xr-x"));
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		UserPrincipal nobody = directory.getFileSystem()
			.getUserPrincipalLookupService()
			.lookupPrincipalByName("nobody");
		Files.setOwner(work, nobody);
		directory = work;
		Path inTmp = Path.of("/tmp", "cave-sandbox-nobody-" + UUID.randomUUID());
		String tmp = given.contains(LinuxNamespace.MOUNT) ? "ls -A /tmp | wc -l"
				: "touch " + inTmp + " 2>touch.err && echo tmp-written || echo tmp-refused";
		String script = "id -u; readlink /proc/self/ns/net; readlink /proc/self/ns/ipc; "
				+ "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo; " + tmp
				+ "; touch written && echo written; grep CapEff /proc/self/status | cut -f2; "
				+ "python3 -c 'import socket; socket.socket()' 2>socket.err && echo socket || echo no-socket";
		List<String> command = new ArrayList<>(
				List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"));
		command.addAll(mechanism.commandLine(List.of("/bin/sh", "-c", script), directory.toRealPath(), false));
		Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		try {
			assertThat(process.waitFor()).as(output).isZero();
			assertThat(inTmp).as("written by nobody in the host's /tmp").doesNotExist();
		}
		finally {
			Files.deleteIfExists(inTmp);
		}
		List<String> lines = output.lines().map(String::trim).toList();
		assertThat(lines).as(output).hasSize(8);
		assertThat(lines.get(0)).isEqualTo("65534");
		if (given.contains(LinuxNamespace.NETWORK)) {
			assertThat(lines.get(1)).startsWith("net:[").isNotEqualTo(namespace("net"));
			assertThat(lines.get(3)).isEqualTo("lo");
		}
		if (given.contains(LinuxNamespace.IPC)) {
			assertThat(lines.get(2)).startsWith("ipc:[").isNotEqualTo(namespace("ipc"));
		}
		assertThat(lines.get(4)).isEqualTo(given.contains(LinuxNamespace.MOUNT) ? "1" : "tmp-refused");
		assertThat(lines.subList(5, 8)).containsExactly("written", "0000000000000000", "no-socket");
		assertThat(directory.resolve("socket.err")).content().contains("Address family not supported by protocol");
		if (!given.contains(LinuxNamespace.MOUNT)) {
			assertThat(directory.resolve("touch.err")).content().contains("Permission denied");
		}
	}

	/**
	 * The seccomp mechanism's only binary is the launcher: a missing {@code launcherPath}
	 * is named with the launcher's cause.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void missingBinaryIsNamed(MechanismChoice choice, @TempDir Path directory) {
		Path missing = directory.resolve("missing");
		IsolationCapability capability = probe(FaultySandboxes.withBinary(choice, missing).build());
		assertThat(capability.available()).isFalse();
		if (choice == MechanismChoice.SECCOMP) {
			assertThat(capability.cause()).isEqualTo(UnavailabilityCause.LAUNCHER_UNAVAILABLE);
			assertThat(capability.detail()).isEqualTo("launcherPath " + missing + " does not exist");
			return;
		}
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING);
		assertThat(capability.detail()).isEqualTo(choice.name().toLowerCase() + ": " + missing + " does not exist");
	}

	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void nonExecutableBinaryIsNamed(MechanismChoice choice, @TempDir Path directory) throws IOException {
		Path file = Files.writeString(directory.resolve("not-a-program"), "not a program");
		IsolationCapability capability = probe(FaultySandboxes.withBinary(choice, file).build());
		if (choice == MechanismChoice.SECCOMP) {
			assertThat(capability.cause()).isEqualTo(UnavailabilityCause.LAUNCHER_UNAVAILABLE);
			assertThat(capability.detail()).startsWith("launcherPath " + file + " is not executable");
			return;
		}
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_NOT_EXECUTABLE);
		assertThat(capability.detail()).isEqualTo(choice.name().toLowerCase() + ": " + file + " is not executable");
	}

	/**
	 * Without bwrap and unshare, the mechanisms that need them are named with their
	 * missing binaries, and auto settles on the seccomp mechanism, which runs only the
	 * launcher.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void withBothBinariesMissingEachIsNamed(@TempDir Path directory) {
		IsolationCapability capability = probe(SandboxSettings.builder()
			.bwrapPath(directory.resolve("bwrap"))
			.unsharePath(directory.resolve("unshare"))
			.build());
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.mechanismName()).isEqualTo("seccomp");
		assertThat(capability.verified())
			.contains("not chosen: bwrap unavailable, BINARY_MISSING (bwrap: " + directory.resolve("bwrap")
					+ " does not exist)")
			.contains("not chosen: unshare unavailable, BINARY_MISSING (unshare: " + directory.resolve("unshare")
					+ " does not exist)")
			.contains("not chosen: namespaces unavailable, BINARY_MISSING (namespaces: " + directory.resolve("unshare")
					+ " does not exist)");
	}

	/**
	 * The kernel's real answers, produced by running the real binaries where the kernel
	 * refuses them (see {@link RestrictedHost}): every mechanism of
	 * {@link LinuxMechanisms#ALL} needs a wrapper and its message for each refusal, else
	 * the test fails.
	 */
	@ParameterizedTest(name = "{0} {1}")
	@MethodSource("realKernelRefusals")
	@EnabledOnOs(OS.LINUX)
	void realKernelRefusalsAreClassified(MechanismChoice choice, String refusal, UnavailabilityCause cause,
			@TempDir Path directory) throws Exception {
		String wrapper = choice.name().toLowerCase() + refusal;
		assertThat(REFUSAL_MESSAGES).as("the message of " + wrapper).containsKey(wrapper);
		Path binary = (Path) RestrictedHost.class.getMethod(wrapper, Path.class).invoke(null, directory);
		IsolationCapability capability = probe(FaultySandboxes.withBinary(choice, binary).build());
		assertThat(capability.cause()).isEqualTo(cause);
		assertThat(capability.detail()).contains(REFUSAL_MESSAGES.get(wrapper));
		assertThat(capability.mechanism()).isNull();
	}

	/**
	 * The refusals of namespaces, for every mechanism that creates some: the seccomp
	 * mechanism creates none, so neither refusal reaches it (auto falls to it, see
	 * {@link #whereEveryMechanismIsRefusedTheKernelsCauseIsReported}).
	 */
	static Stream<Arguments> realKernelRefusals() {
		return LinuxMechanisms.ALL.stream()
			.filter((choice) -> !LinuxMechanisms.namespaces(choice).isEmpty())
			.flatMap((choice) -> Stream.of(
					arguments(choice, "WithNamespaceLimitZero", UnavailabilityCause.NAMESPACE_LIMIT),
					arguments(choice, "WithoutCapabilities", UnavailabilityCause.UID_MAP_REFUSED)));
	}

	/**
	 * Where every mechanism with namespaces is refused them, auto names the kernel's
	 * cause of each and falls to the seccomp mechanism, which needs none.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void whereEveryMechanismIsRefusedTheKernelsCauseIsReported(@TempDir Path directory) throws IOException {
		// The wrappers set the limit for their own user namespace (no command user).
		SandboxSettings.Builder settings = SandboxSettings.builder()
			.commandUser(0)
			.bwrapPath(RestrictedHost.bwrapWithNamespaceLimitZero(directory))
			.unsharePath(RestrictedHost.unshareWithNamespaceLimitZero(directory));
		IsolationCapability capability = probe(settings.build());
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.mechanismName()).isEqualTo("seccomp");
		assertThat(capability.verified())
			.anyMatch((fact) -> fact.startsWith("not chosen: bwrap unavailable, NAMESPACE_LIMIT"))
			.anyMatch((fact) -> fact.startsWith("not chosen: unshare unavailable, NAMESPACE_LIMIT"))
			.anyMatch((fact) -> fact.startsWith("not chosen: namespaces unavailable, NAMESPACE_LIMIT"));
	}

	/**
	 * A wrapper that skips its options and runs the probe's script in the host's
	 * namespaces (the unshare one also skips its setup script, which must never run on
	 * the host): the probe must notice.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void aWrapperThatDoesNotIsolateIsNotVerified(MechanismChoice choice) {
		assumeNoWrapperFor(choice, "claims no namespace");
		IsolationCapability capability = probe(FaultySandboxes.settings(choice, Fault.NO_NAMESPACES).build());
		assertThat(capability.cause()).as("%s", capability).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		if (!LinuxMechanisms.namespaces(choice).contains(LinuxNamespace.MOUNT)) {
			// Without a mount namespace the launcher has no bind to check: the probe
			// sees the host's namespaces itself.
			assertThat(capability.detail()).isEqualTo("the child's network namespace " + namespace("net")
					+ " is not a new one (host: " + namespace("net") + ")");
			return;
		}
		// The launcher refuses first: its init runs only as PID 1 of a new PID namespace,
		// and only in a working directory that the wrapper bound nosuid,nodev.
		assertThat(capability.detail()).startsWith("exit 125: cave-sandbox-launcher: ")
			.contains((choice == MechanismChoice.BWRAP) ? "init must run as PID 1 of a new PID namespace"
					: "the working directory is not the sandbox's writable nosuid,nodev bind of it")
			.contains(LauncherContract.NOT_SET_UP);
	}

	/**
	 * The real sandbox without its new IPC namespace (bwrap without
	 * {@code --unshare-ipc}, unshare without {@code --ipc}): the child would reach the
	 * host's System V IPC and POSIX message queues.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void aSandboxThatKeepsTheHostsIpcNamespaceIsNotVerified(MechanismChoice choice) {
		assumeNoWrapperFor(choice, "claims no IPC namespace");
		IsolationCapability capability = probe(FaultySandboxes.settings(choice, Fault.HOST_IPC_NAMESPACE).build());
		assertThat(capability.cause()).as("%s", capability).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(capability.detail())
			.isEqualTo("the child's IPC namespace " + namespace("ipc") + " is not a new one (host: " + namespace("ipc")
					+ "): the host's System V IPC and POSIX message queues would be in reach");
	}

	/**
	 * The real sandbox without the tmpfs over the hidden directories: the child sees the
	 * host's {@code /tmp}, where host unix sockets live. The namespaces mechanism has no
	 * mount namespace and hides nothing; what stands in for it is the launcher's
	 * {@code --no-mount-namespace}, and without it the launcher refuses to run in a
	 * working directory that is not a bind.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void aSandboxThatLeavesTheHostDirectoriesVisibleIsNotVerified(MechanismChoice choice) throws IOException {
		assumeNoWrapperFor(choice,
				"has no mount namespace, and its --no-mount-namespace is on the launcher's own " + "command line");
		IsolationCapability capability = probe(
				FaultySandboxes.settings(choice, Fault.HOST_DIRECTORIES_VISIBLE).build());
		assertThat(capability.cause()).as("%s", capability).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		if (!LinuxMechanisms.namespaces(choice).contains(LinuxNamespace.MOUNT)) {
			// The paths of the probe's shared-memory directory and library come first
			// where the view has none of its own.
			assertThat(capability.detail()).startsWith("exit 125: cave-sandbox-launcher: ")
				.containsAnyOf("the working directory is not the sandbox's writable nosuid,nodev bind of it",
						"--read, --mask and --write are for exec and contain with --no-mount-namespace");
			return;
		}
		long device = ((Number) Files.getAttribute(Path.of("/tmp").toRealPath(), "unix:dev")).longValue();
		assertThat(capability.detail())
			.isEqualTo("the hidden directory /tmp is still the host's in the child (device " + device + ")");
	}

	/**
	 * The real sandbox whose wrapper leaves the command the capabilities of its user
	 * namespace (bwrap with {@code --cap-add ALL}; unshare mapping the command to root,
	 * without dropping them): the launcher drops every capability itself, bounding set
	 * included, so the command still holds none and could not unmount the tmpfs over the
	 * host's sockets.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void aWrapperThatKeepsCapabilitiesStillGivesTheCommandNone(MechanismChoice choice) {
		// The seccomp mechanism has no wrapper: outer and contain run with the JVM's
		// capabilities, so its real command line is this case.
		IsolationCapability capability = probe(
				(choice == MechanismChoice.SECCOMP) ? SandboxSettings.builder().mechanism(choice).build()
						: FaultySandboxes.settings(choice, Fault.CAPABILITIES_KEPT).build());
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.verified()).contains(NONE);
	}

	/**
	 * The real sandbox with an interface besides {@code lo}, added inside its new network
	 * namespace before the child runs (never in the host's). bwrap's stand-in gives the
	 * command the two capabilities this takes, which bwrap grants only to root.
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void aSandboxWithAnotherInterfaceIsNotVerified(MechanismChoice choice) {
		assumeThat(choice != MechanismChoice.BWRAP || "root".equals(System.getProperty("user.name")))
			.as("bwrap adds capabilities for root only")
			.isTrue();
		assumeNoWrapperFor(choice,
				"has no network namespace (the host's interfaces are in sight, every socket is " + "refused)");
		IsolationCapability capability = probe(FaultySandboxes.settings(choice, Fault.EXTRA_INTERFACE).build());
		assertThat(capability.cause()).as("%s", capability).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(capability.detail()).isEqualTo("the child sees the interfaces [lo, cave0], expected only lo");
	}

	/**
	 * A wrapper that keeps the host's user namespace: the setup script refuses to mount.
	 * (The wrapper still gives it a throwaway mount namespace, so that a broken guard
	 * could not hide this host's directories.)
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void unshareSetupRefusesToRunOutsideANewUserNamespace(@TempDir Path directory) throws IOException {
		assumeThat(System.getProperty("user.name")).as("a mount namespace without a user namespace needs root")
			.isEqualTo("root");
		Path fake = RestrictedHost.script(directory, "fake", "while [ \"$1\" != \"--\" ]; do shift; done; shift; "
				+ "exec /usr/bin/unshare --mount --propagation private -- \"$@\"");
		IsolationCapability capability = probe(
				SandboxSettings.builder().mechanism(MechanismChoice.UNSHARE).commandUser(0).unsharePath(fake).build());
		assertThat(capability.available()).isFalse();
		assertThat(capability.detail()).contains("exit 125", LauncherContract.MESSAGE_PREFIX
				+ " root runs only in a new user namespace of one mapped id: not in a " + "new user namespace");
	}

	/**
	 * util-linux before 2.38 has no {@code --map-user}: simulated by a wrapper that
	 * rejects it the way getopt does. It does not matter any more: the launcher makes the
	 * nested user namespaces itself, and the command still gets the caller's uid back.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "UNSHARE", "NAMESPACES" })
	@EnabledOnOs(OS.LINUX)
	void olderUtilLinuxStillKeepsTheCallersUid(MechanismChoice choice) throws IOException {
		// A root JVM's command user needs no nested user namespace: not that case.
		IsolationCapability capability = probe(SandboxSettings.builder()
			.mechanism(choice)
			.commandUser(0)
			.unsharePath(utilLinuxWithoutMapUser())
			.build());
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat((choice == MechanismChoice.UNSHARE) ? ((UnshareMechanism) capability.mechanism()).keepUid()
				: ((NamespacesMechanism) capability.mechanism()).keepUid())
			.isTrue();
		assertThat(capability.verified()).contains(NONE)
			.noneMatch((fact) -> fact.endsWith("is mapped to root without capabilities"));
	}

	private static Path utilLinuxWithoutMapUser() throws IOException {
		Path directory = VisibleDirectories.create("util-linux-2.37-");
		return RestrictedHost.script(directory, "unshare", "for a in \"$@\"; do case \"$a\" in --map-user=*) "
				+ "echo \"unshare: unrecognized option '$a'\" >&2; exit 1;; esac; done; exec /usr/bin/unshare \"$@\"");
	}

	/**
	 * A wrapper that never answers: the probe gives up at its timeout, which is all this
	 * measures (the wrapper would sleep 100 times as long).
	 */
	@ForEachLinuxMechanism
	@EnabledOnOs(OS.LINUX)
	void probeThatHangsTimesOut(MechanismChoice choice, @TempDir Path directory) throws IOException {
		assumeNoWrapperFor(choice, "could hang only in the launcher itself");
		Path slow = RestrictedHost.script(directory, "hanging", "exec sleep 30");
		IsolationCapability capability = probe(FaultySandboxes.withBinary(choice, slow)
			.probeTimeout(Duration.ofMillis(300))
			.killGracePeriod(Duration.ofMillis(100))
			.build());
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.PROBE_TIMEOUT);
	}

	@Test
	void mechanismNoneIsReportedAsSwitchedOff() {
		IsolationCapability capability = probe(
				SandboxSettings.builder().mechanism(MechanismChoice.NONE).mode(SandboxMode.FALLBACK).build());
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.MECHANISM_DISABLED);
		assertThat(capability.detail()).isEmpty();
		assertThat(capability.cause().description()).contains("mechanism none");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "Windows 11|AUTO", "Windows Server 2022|AUTO", "FreeBSD|AUTO", "SunOS|AUTO",
			"Mac OS X|BWRAP", "Mac OS X|UNSHARE", "Linux|SANDBOX_EXEC" })
	void systemsAndMechanismsWithoutAPrimitiveAreUnsupported(String osName, MechanismChoice choice) {
		IsolationCapability capability = new NetworkIsolationProbe(SandboxSettings.builder().mechanism(choice).build(),
				osName)
			.probe();
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.UNSUPPORTED_OS);
		assertThat(capability.detail()).contains("os.name=" + osName);
		if (choice != MechanismChoice.AUTO) {
			assertThat(capability.detail())
				.contains("mechanism " + choice.name().toLowerCase(Locale.ROOT).replace('_', '-'))
				.doesNotContain(choice.name());
		}
	}

	/**
	 * A mechanism of the other system is explained for the system the JVM runs on, not as
	 * if it were Windows.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|',
			value = {
					"Linux|SANDBOX_EXEC|sandbox-exec is macOS's mechanism; on Linux choose mechanism auto, bwrap, "
							+ "unshare, namespaces or seccomp",
					"Mac OS X|BWRAP|bwrap is a Linux mechanism; on macOS choose mechanism auto or sandbox-exec",
					"Mac OS X|SECCOMP|seccomp is a Linux mechanism; on macOS choose mechanism auto or sandbox-exec" })
	void aMechanismOfTheOtherSystemIsExplainedForThisSystem(String osName, MechanismChoice choice, String explained) {
		IsolationCapability capability = new NetworkIsolationProbe(SandboxSettings.builder().mechanism(choice).build(),
				osName)
			.probe();
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.UNSUPPORTED_OS);
		assertThat(capability.detail()).endsWith(explained).doesNotContain("Windows");
	}

	@Test
	@EnabledOnOs({ OS.LINUX, OS.MAC })
	void onWindowsStrictFailsClosedAndFallbackRunsUnisolatedAsOnLinux(@TempDir Path directory) {
		SandboxSettings settings = SandboxSettings.defaults();
		IsolationCapability capability = new NetworkIsolationProbe(settings, "Windows 11").probe();
		assertThat(capability.detail()).contains("Windows has no network namespace");
		assertThat(capability.cause().fix()).contains("WSL2");
		Path marker = directory.resolve("marker");
		assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
			.isThrownBy(() -> new UnavailableIsolatedExecutor(capability).execute("touch", marker.toString()))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_os_network_isolation_unavailable"))
			.satisfies((ex) -> assertThat(ex.cause()).isEqualTo(UnavailabilityCause.UNSUPPORTED_OS))
			.withMessageContaining("os.name=Windows 11");
		assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
			.isThrownBy(() -> ProcessIsolatedExecutor.isolated(settings, capability));
		assertThat(marker).doesNotExist();
		try (ProcessIsolatedExecutor fallback = ProcessIsolatedExecutor.unisolated(settings)) {
			ExecutionResult result = fallback.execute("touch", marker.toString());
			assertThat(result.isolation()).isEqualTo(Isolation.NONE);
		}
		assertThat(marker).exists();
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void macosNestedSandboxRefusalIsDetectedFromItsRealMessage(@TempDir Path directory) throws IOException {
		Path sandboxExec = RestrictedHost.script(directory, "sandbox-exec",
				"echo 'sandbox-exec: sandbox_apply: Operation not permitted' >&2; exit 71");
		IsolationCapability capability = probeMacos(SandboxSettings.builder().sandboxExecPath(sandboxExec));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.NESTED_SANDBOX_REFUSED);
		assertThat(capability.detail()).isEqualTo("exit 71: sandbox-exec: sandbox_apply: Operation not permitted");
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void macosMissingSandboxExecIsNamed(@TempDir Path directory) {
		IsolationCapability capability = probeMacos(
				SandboxSettings.builder().sandboxExecPath(directory.resolve("sandbox-exec")));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING);
		assertThat(capability.detail()).startsWith("sandbox-exec: ");
	}

	/**
	 * A stand-in for sandbox-exec that runs the command without any sandbox: the probe's
	 * connect test reaches its listener, so nothing is claimed.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void macosProfileThatDoesNotDenyTheNetworkIsNotVerified(@TempDir Path directory) throws IOException {
		Path sandboxExec = RestrictedHost.script(directory, "sandbox-exec",
				"while [ \"$1\" != \"--\" ]; do shift; done; shift; exec \"$@\"");
		IsolationCapability capability = probeMacos(SandboxSettings.builder().sandboxExecPath(sandboxExec));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(capability.detail()).contains("reached a listener of the probe");
	}

	/**
	 * A stand-in for sandbox-exec that checks its arguments are the Seatbelt command
	 * line, then denies the network the Linux way: the probe's logic, run for real.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void macosProfileThatDeniesTheNetworkIsVerified(@TempDir Path directory) throws IOException {
		Path sandboxExec = RestrictedHost.script(directory, "sandbox-exec",
				"[ \"$1\" = -p ] && case \"$2\" in *'(deny network*)'*) ;; *) exit 64;; esac "
						+ "&& case \"$3\" in -DWORKDIR=/*) ;; *) exit 64;; esac && [ \"$4\" = -- ] || exit 64; "
						+ "shift 4; exec /usr/bin/unshare --user --map-root-user --net \"$@\"");
		IsolationCapability capability = probeMacos(SandboxSettings.builder().sandboxExecPath(sandboxExec));
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.mechanismName()).isEqualTo("sandbox-exec");
		assertThat(capability.privateLoopback()).isFalse();
		assertThat(capability.verified())
			.contains("sandbox-exec applied the deny-network profile (sandbox_apply succeeded)")
			.anyMatch((fact) -> fact.startsWith("a TCP connect from inside to a listener of the probe on 127.0.0.1 "
					+ "failed and nothing arrived"));
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void macosCannotProvideARequiredPrivateLoopback(@TempDir Path directory) throws IOException {
		Path sandboxExec = RestrictedHost.script(directory, "sandbox-exec", "exit 0");
		IsolationCapability capability = probeMacos(
				SandboxSettings.builder().sandboxExecPath(sandboxExec).loopback(true));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE);
	}

	@Test
	void everyCauseNamesItsFix() {
		for (UnavailabilityCause cause : UnavailabilityCause.values()) {
			assertThat(cause.description()).as("%s", cause).isNotBlank();
			assertThat(cause.fix()).as("%s", cause).isNotBlank().doesNotEndWith(".");
		}
	}

	/**
	 * The seccomp mechanism runs nothing but the launcher, whose SHA-256 the probe
	 * checks, so no wrapper can give it a fault; the reason says what it does not claim
	 * either.
	 */
	private static void assumeNoWrapperFor(MechanismChoice choice, String reason) {
		Assumptions.assumeTrue(choice != MechanismChoice.SECCOMP,
				"the seccomp mechanism has no wrapper binary to give a fault, and " + reason);
	}

	private static String namespace(String type) {
		try {
			return Files.readSymbolicLink(Path.of("/proc/self/ns", type)).toString();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static IsolationCapability probeMacos(SandboxSettings.Builder settings) {
		IsolationCapability capability = new NetworkIsolationProbe(settings.build(), MACOS).probe();
		if (capability.available()) {
			assertThat(capability.mechanism()).isInstanceOf(SandboxExecMechanism.class);
		}
		return capability;
	}

	private static IsolationCapability probe(SandboxSettings settings) {
		return new NetworkIsolationProbe(settings).probe();
	}

}
