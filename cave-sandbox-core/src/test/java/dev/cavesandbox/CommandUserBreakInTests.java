package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Break-in attempts on the command user of a JVM running as the host's root
 * ({@code --command-user}, see {@link LauncherCommandUserTests}): uid 65534 with
 * {@code CAP_DAC_OVERRIDE} and {@code CAP_FOWNER} over root:root files, in a user
 * namespace that maps only 0 and 65534, beside a PID 1 of uid 0. Each test is an attack
 * that must stay stopped. Nothing is written to a kernel interface: the attempts only
 * open files for writing, which is where the permission check happens, and close them.
 */
@EnabledOnOs(OS.LINUX)
class CommandUserBreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

	/**
	 * Host kernel interfaces that the kernel guards only by their mode (root:root, owner
	 * writable, no capability check in the write handler): PCI configuration space
	 * ({@code proc_bus_pci_write}), interrupt affinity ({@code /proc/irq}), the kernel
	 * log ({@code /dev/kmsg}), and root's 0600 devices (KVM, FUSE, loop control).
	 */
	private static final List<String> KERNEL_INTERFACES = List.of("/proc/irq/default_smp_affinity", "/dev/kmsg",
			"/dev/kvm", "/dev/fuse", "/dev/loop-control");

	/** Root's 0600 character devices (root:root), whose open is their only guard. */
	private static final List<String> ROOTS_DEVICES = List.of("/dev/kvm", "/dev/console", "/dev/tty1",
			"/dev/loop-control", "/dev/hwrng");

	@BeforeEach
	void hostRoot() {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
	}

	/**
	 * Finding (red team of the command user): on the {@code unshare} mechanism a root
	 * JVM's command opens for writing PCI configuration space under
	 * {@code /proc/bus/pci}, {@code /proc/irq/*}{@code /smp_affinity}, {@code /dev/kmsg},
	 * {@code /dev/kvm}, {@code /dev/fuse} and {@code /dev/loop-control}:
	 * {@code --mount-proc} mounts a complete procfs (bwrap covers {@code /proc/irq} and
	 * {@code /proc/bus} read-only, unshare does not), and {@code /dev} is the host's
	 * devtmpfs, whose device nodes stay usable on the read-only remount. Those files are
	 * root:root, so {@code CAP_DAC_OVERRIDE} in the command user's namespace opens them,
	 * as ownership did for the uid-0 command before (command user 0 opens them too).
	 * bwrap, namespaces (Landlock) and seccomp (Landlock) refuse them.
	 */
	@Disabled("finding: on the unshare mechanism a root JVM's command (65534 with CAP_DAC_OVERRIDE, and uid 0 before) "
			+ "opens /proc/bus/pci/*, /proc/irq/*, /dev/kmsg, /dev/kvm, /dev/fuse, /dev/loop-control for writing: "
			+ "fix: read-only binds of /proc/irq and /proc/bus (and /proc/acpi, /proc/scsi where present) after "
			+ "--mount-proc, and a /dev of its own (tmpfs with null, zero, full, random, urandom, tty, pts, ptmx, "
			+ "shm) in the unshare mechanism's PID 1 script, as bwrap does")
	@ForEachLinuxMechanism
	void hostKernelInterfacesAreNotWritableFromTheSandbox(MechanismChoice choice, @TempDir Path directory)
			throws IOException {
		List<String> targets = new ArrayList<>(
				KERNEL_INTERFACES.stream().filter((path) -> Files.exists(Path.of(path))).toList());
		try (Stream<Path> buses = Files.list(Path.of("/proc/bus/pci"))) {
			buses.filter(Files::isDirectory).limit(1).forEach((bus) -> {
				try (Stream<Path> devices = Files.list(bus)) {
					devices.limit(1).forEach((device) -> targets.add(device.toString()));
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			});
		}
		catch (IOException ex) {
			// No PCI bus on this host: the other targets remain.
		}
		assertThat(targets).as("kernel interfaces present on this host").isNotEmpty();
		assertThat(openedOutside("O_WRONLY", targets)).as("the control: the JVM opens them").isEqualTo(targets);
		assertThat(openedInside(choice, directory, "O_WRONLY", targets)).as("opened for writing from inside %s", choice)
			.isEmpty();
	}

	/**
	 * Finding (red team of the command user): on {@code unshare}, {@code namespaces} and
	 * {@code seccomp} a root JVM's command opens root's 0600 devices for reading, and
	 * their ioctls work: it creates a KVM virtual machine ({@code KVM_CREATE_VM}), reads
	 * the host's console and virtual terminals (keystrokes typed there), raw loop devices
	 * and the hardware random generator. unshare shows the host's devtmpfs; Landlock, on
	 * the other two, restricts writes only (not reads, nor {@code IOCTL_DEV} of ABI 5).
	 * The command user's {@code CAP_DAC_OVERRIDE} covers them (root:root), as ownership
	 * did for the uid-0 command before, and still does on seccomp. bwrap's {@code /dev}
	 * has none of them.
	 */
	@Disabled("finding: on unshare, namespaces and seccomp a root JVM's command opens /dev/kvm (and creates a VM), "
			+ "/dev/console, /dev/tty1, /dev/loop-control, /dev/hwrng for reading; fix: a /dev of its own on unshare "
			+ "(as bwrap), and on the Landlock mechanisms LANDLOCK_ACCESS_FS_IOCTL_DEV (ABI 5) and READ_FILE handled "
			+ "for /dev outside null, zero, full, random, urandom, tty and the pts")
	@ForEachLinuxMechanism
	void rootsDevicesCannotBeOpenedFromTheSandbox(MechanismChoice choice, @TempDir Path directory) {
		List<String> targets = ROOTS_DEVICES.stream().filter((path) -> Files.exists(Path.of(path))).toList();
		assertThat(targets).as("root's devices present on this host").isNotEmpty();
		assertThat(openedOutside("O_RDONLY", targets)).as("the control: the JVM opens them").isEqualTo(targets);
		assertThat(openedInside(choice, directory, "O_RDONLY", targets)).as("opened for reading from inside %s", choice)
			.isEmpty();
	}

	/**
	 * Held: the command user cannot become uid 0 again, nor reach the uid-0 PID 1 beside
	 * it (bwrap's launcher init without capabilities, unshare's shell with every
	 * capability of the namespace): no setuid(0) or user namespace of its own, no signal
	 * to PID 1, and PID 1's root, working directory, environment, memory, maps and
	 * descriptors are refused (ptrace access: another uid, and no CAP_SYS_PTRACE in the
	 * namespace), although {@code CAP_DAC_OVERRIDE} lists {@code /proc/1/fd}.
	 */
	@ForEachLinuxMechanism
	void theCommandUserCannotRegainUidZeroNorReachItsPid1(MechanismChoice choice, @TempDir Path directory) {
		assumeThat(choice).isNotEqualTo(MechanismChoice.SECCOMP);
		String script = """
				import ctypes, os
				libc = ctypes.CDLL(None, use_errno=True)
				def attempt(name, action):
				    try:
				        action()
				        print(name + "=allowed")
				    except OSError as error:
				        print(name + "=" + str(error.errno))
				def setuid():
				    os.setuid(0)
				def unshare():
				    if libc.unshare(0x10000000) != 0:
				        raise OSError(ctypes.get_errno(), "unshare")
				def fd0():
				    os.close(os.open("/proc/1/fd/" + sorted(os.listdir("/proc/1/fd"), key=int)[0], os.O_RDONLY))
				attempt("setuid", setuid)
				attempt("unshare", unshare)
				attempt("kill", lambda: os.kill(1, 0))
				attempt("root", lambda: os.listdir("/proc/1/root/"))
				attempt("cwd", lambda: os.listdir("/proc/1/cwd/"))
				attempt("environ", lambda: open("/proc/1/environ", "rb").read(1))
				attempt("mem", lambda: open("/proc/1/mem", "rb").read(1))
				attempt("maps", lambda: open("/proc/1/maps", "rb").read(1))
				attempt("fd", fd0)
				print("uid=%d,%d,%d pid1=%s" % (os.getresuid() + (open("/proc/1/status").read().split("Uid:")[1].split()[0],)))
				""";
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(PYTHON, "-c", script)
				.workingDirectory(directory)
				.timeout(Duration.ofSeconds(60))
				.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText().lines().toList()).containsExactly("setuid=1", "unshare=1", "kill=1",
					"root=13", "cwd=13", "environ=13", "mem=13", "maps=13", "fd=13", "uid=65534,65534,65534 pid1=0");
		}
	}

	/**
	 * Held: SIGKILL to {@code outer}, the JVM's child that joined the command user's
	 * namespace and holds the parent-death signal, ends the whole execution on every
	 * mechanism: the command and a child it forked are gone and the execution returns.
	 */
	@ForEachLinuxMechanism
	void killingOuterEndsTheWholeExecution(MechanismChoice choice, @TempDir Path directory) throws Exception {
		killAncestorAndAwaitTheTreeGone(choice, directory, true);
	}

	/**
	 * Finding (red team of the command user, on the unchanged {@code seccomp} mechanism):
	 * SIGKILL to the wrapper, {@code outer}'s child ({@code contain}, the child
	 * subreaper), leaves a grandchild of the command running: the command itself has a
	 * parent-death signal, what it forks has none, and no PID namespace takes the rest
	 * down. The command cannot send that signal itself (Landlock's signal scope), but
	 * anything else that ends {@code contain} (the OOM killer, an operator) leaves the
	 * tree behind. On bwrap, unshare and namespaces the PID namespace ends with its PID
	 * 1, which dies with the wrapper.
	 */
	@Disabled("finding: on the seccomp mechanism SIGKILL to the launcher's contain (outer's child) leaves the command's "
			+ "forked children running; fix: contain could hold the tree in a process group or cgroup that outer "
			+ "kills when its wrapper ends, or outer could kill the remaining descendants it finds by PPid chain")
	@ForEachLinuxMechanism
	void killingTheWrapperEndsTheWholeExecution(MechanismChoice choice, @TempDir Path directory) throws Exception {
		killAncestorAndAwaitTheTreeGone(choice, directory, false);
	}

	/**
	 * Finding (red team of the command user): the command user's uid is a real host uid,
	 * by default 65534, {@code nobody}, which host daemons run as. A host process of that
	 * uid may signal the sandbox's command ({@code kill_ok_by_cred} compares uids, not
	 * user namespaces): SIGSTOP or SIGKILL from a compromised {@code nobody} daemon
	 * reaches every root JVM's command, which the uid-0 command of before was safe from
	 * (the same holds for {@code prlimit} lowering the command's limits). Shown with
	 * signal 0 only. The seccomp mechanism (still root) holds.
	 */
	@Disabled("finding: a host process running as the command user's uid (default 65534, nobody) can signal a root "
			+ "JVM's sandboxed command on bwrap, unshare and namespaces; fix: default to a uid that no host account "
			+ "uses (or pick one per executor from a configured range) and document that the command user must not "
			+ "be shared with host processes")
	@ForEachLinuxMechanism
	void aHostProcessOfTheCommandUsersUidCannotSignalTheCommand(MechanismChoice choice, @TempDir Path directory)
			throws Exception {
		String marker = "cave-sandbox-victim-" + UUID.randomUUID();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			CompletableFuture<ExecutionResult> execution = start(executor, directory, "import time\ntime.sleep(600)",
					marker);
			try {
				await().atMost(Duration.ofSeconds(60)).until(() -> victims(marker).size() == 1);
				long command = victims(marker).get(0);
				Process nobody = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
						"--", PYTHON, "-c",
						"import os, sys\ntry:\n    os.kill(int(sys.argv[1]), 0)\n    print('signalled')\n"
								+ "except OSError as error:\n    print(error.errno)",
						String.valueOf(command))
					.redirectErrorStream(true)
					.start();
				String answer = new String(nobody.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
				assertThat(nobody.waitFor()).as(answer).isZero();
				assertThat(answer).as("signal 0 from a host process of uid 65534 to the command of %s", choice)
					.isEqualTo("1");
			}
			finally {
				victims(marker).forEach((pid) -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
				execution.get(60, TimeUnit.SECONDS);
			}
		}
	}

	/**
	 * Start a Python script with the marker as its argument on a thread of its own (the
	 * sandbox dies with the thread that spawned it).
	 */
	private static CompletableFuture<ExecutionResult> start(ProcessIsolatedExecutor executor, Path directory,
			String script, String marker) {
		return CompletableFuture
			.supplyAsync(() -> executor.execute(ExecutionRequest.builder(PYTHON, "-c", script, marker)
				.workingDirectory(directory)
				.timeout(Duration.ofSeconds(300))
				.build()), (task) -> new Thread(task).start());
	}

	private static void killAncestorAndAwaitTheTreeGone(MechanismChoice choice, Path directory, boolean outer)
			throws Exception {
		String marker = "cave-sandbox-victim-" + UUID.randomUUID();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			CompletableFuture<ExecutionResult> execution = start(executor, directory,
					"import os, time\nos.fork()\ntime.sleep(600)", marker);
			await().atMost(Duration.ofSeconds(60)).until(() -> victims(marker).size() == 2);
			long previous = victims(marker).get(0);
			long current = parent(previous);
			// outer is the JVM's child (on seccomp, contain below it runs in outer's
			// forked process and keeps outer's command line).
			long jvm = ProcessHandle.current().pid();
			while (parent(current) != jvm) {
				assertThat(current).as("outer among the command's ancestors").isGreaterThan(1);
				previous = current;
				current = parent(current);
			}
			long target = outer ? current : previous;
			try {
				assertThat(ProcessHandle.of(target).orElseThrow().destroyForcibly()).isTrue();
				await().atMost(Duration.ofSeconds(60)).until(() -> victims(marker).isEmpty());
				assertThat(execution.get(60, TimeUnit.SECONDS).exitCode()).isNotZero();
			}
			finally {
				victims(marker).forEach((pid) -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
			}
		}
	}

	private static List<Long> victims(String marker) throws IOException {
		try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
			return entries.filter((entry) -> entry.getFileName().toString().matches("\\d+"))
				.map((entry) -> Long.parseLong(entry.getFileName().toString()))
				.filter((pid) -> {
					String commandLine = commandLine(pid);
					return commandLine.startsWith(PYTHON + " ") && commandLine.endsWith(" " + marker);
				})
				.toList();
		}
	}

	private static String commandLine(long pid) {
		try {
			return new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
				.replace('\0', ' ')
				.strip();
		}
		catch (IOException ex) {
			return "";
		}
	}

	private static long parent(long pid) throws IOException {
		return Files.readAllLines(Path.of("/proc/" + pid + "/status"))
			.stream()
			.filter((line) -> line.startsWith("PPid:"))
			.mapToLong((line) -> Long.parseLong(line.substring(5).strip()))
			.findFirst()
			.orElse(0);
	}

	/**
	 * The targets that a command in the sandbox opens with the flag ({@code O_RDONLY} or
	 * {@code O_WRONLY}, never a write), each closed at once; {@code /dev/kvm} opened for
	 * reading must also create a virtual machine.
	 */
	private static List<String> openedInside(MechanismChoice choice, Path directory, String flag,
			List<String> targets) {
		List<String> argv = new ArrayList<>(List.of(PYTHON, "-c", opener(flag)));
		argv.addAll(targets);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			ExecutionResult result = executor.execute(
					ExecutionRequest.builder(argv).workingDirectory(directory).timeout(Duration.ofSeconds(60)).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			return result.stdoutText().lines().toList();
		}
	}

	private static List<String> openedOutside(String flag, List<String> targets) {
		List<String> argv = new ArrayList<>(List.of(PYTHON, "-c", opener(flag)));
		argv.addAll(targets);
		try {
			Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor()).as(output).isZero();
			return output.lines().toList();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static String opener(String flag) {
		return "import fcntl, os, sys\n" + "for path in sys.argv[1:]:\n" + "    try:\n"
				+ "        fd = os.open(path, os." + flag + " | os.O_NOCTTY | os.O_NONBLOCK)\n" + "        try:\n"
				+ "            if path == '/dev/kvm' and os." + flag + " == os.O_RDONLY:\n"
				+ "                os.close(fcntl.ioctl(fd, 0xAE01, 0))\n" + "        finally:\n"
				+ "            os.close(fd)\n" + "        print(path)\n" + "    except OSError:\n" + "        pass\n";
	}

}
