package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real OCI container: Debian's {@code runc} runs a command in a bundle whose
 * {@code config.json} this class writes (runtime-spec 1.0), in one of two shapes of
 * {@link Shape}. Needs root.
 * <p>
 * The root file system is an empty directory of the bundle, read-only, over which the
 * host's {@code /usr}, {@code /etc} and {@code /var} are bound read-only (with the host's
 * {@code /bin}, {@code /lib*} and {@code /sbin} links, or binds where they are
 * directories), the JDK where it lies outside them, and the test's directory read-write
 * at its own path; {@code /tmp} is a tmpfs of the container's, {@code /dev},
 * {@code /dev/shm}, {@code /dev/mqueue}, {@code /proc} and {@code /sys} are as
 * {@code runc spec} makes them. Namespaces: PID, mount, IPC, UTS and network; the network
 * namespace is the container's own with nothing but its loopback, so no traffic leaves
 * it. The seccomp profile refuses what Docker's default profile refuses a container
 * without {@code CAP_SYS_ADMIN} (moby's {@code profiles/seccomp/default.json}): the mount
 * calls, {@code unshare}, {@code setns}, {@code clone} with any {@code CLONE_NEW*} flag
 * (EPERM), {@code clone3} (ENOSYS, so that libc falls back to {@code clone}), and the
 * calls it never allows (keys, modules, {@code bpf}, {@code perf_event_open},
 * {@code userfaultfd}, handles, clocks, ...); everything else is allowed.
 */
final class RuncContainer implements AutoCloseable {

	static final Path RUNC = Path.of("/usr/sbin/runc");

	/** Docker's default capability set (moby's {@code oci/caps/defaults.go}). */
	private static final List<String> DOCKER_CAPABILITIES = List.of("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID",
			"CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
			"CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE");

	private static final List<String> REFUSED_EPERM = List.of("mount", "umount", "umount2", "pivot_root", "open_tree",
			"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", "acct",
			"add_key", "keyctl", "request_key", "bpf", "perf_event_open", "userfaultfd", "init_module", "finit_module",
			"delete_module", "kexec_load", "kexec_file_load", "name_to_handle_at", "open_by_handle_at", "clock_adjtime",
			"clock_settime", "settimeofday", "stime", "swapon", "swapoff", "reboot", "quotactl", "lookup_dcookie",
			"iopl", "ioperm", "uselib", "ustat", "sysfs", "_sysctl", "kcmp", "process_vm_readv", "process_vm_writev");

	/** {@code CLONE_NEWNS} .. {@code CLONE_NEWNET}: Docker's mask {@code 0x7E020000}. */
	private static final long[] CLONE_NEW_FLAGS = { 0x00020000L, 0x02000000L, 0x04000000L, 0x08000000L, 0x10000000L,
			0x20000000L, 0x40000000L };

	/**
	 * Who runs in the container, with what.
	 */
	enum Shape {

		/**
		 * {@code docker run} with the default profile: uid 0, Docker's default
		 * capabilities, {@code no_new_privs} unset.
		 */
		DOCKER_DEFAULT(0, DOCKER_CAPABILITIES, false),

		/**
		 * A pod of Kubernetes' "restricted" Pod Security Standard: uid and gid 65534,
		 * every capability dropped, {@code allowPrivilegeEscalation: false}
		 * ({@code no_new_privs}), the runtime's default seccomp profile.
		 */
		KUBERNETES_RESTRICTED(NobodyCommandLines.NOBODY, List.of(), true);

		private final long uid;

		private final List<String> capabilities;

		private final boolean noNewPrivileges;

		Shape(long uid, List<String> capabilities, boolean noNewPrivileges) {
			this.uid = uid;
			this.capabilities = capabilities;
			this.noNewPrivileges = noNewPrivileges;
		}

		/**
		 * What a process of the container reports: its network interfaces (the loopback
		 * alone), uid, effective capabilities (Docker's 14 are {@code 0xa80425fb}) and
		 * {@code no_new_privs}, as {@code ls /sys/class/net; id -u} and the
		 * {@code CapEff} and {@code NoNewPrivs} lines of {@code /proc/self/status} print
		 * them.
		 */
		String inside() {
			String capabilities = this.capabilities.isEmpty() ? "0000000000000000" : "00000000a80425fb";
			return "lo\n" + this.uid + "\nCapEff:\t" + capabilities + "\nNoNewPrivs:\t" + (this.noNewPrivileges ? 1 : 0)
					+ "\n";
		}

		ContainerConfinement.User user() {
			return (this.uid == 0) ? ContainerConfinement.User.ROOT : ContainerConfinement.User.NOBODY;
		}

	}

	private final Path bundle;

	private final Shape shape;

	private final Path writable;

	private final String id = "cave-sandbox-compat-" + UUID.randomUUID().toString().substring(0, 8);

	/**
	 * A container, not yet created.
	 * @param bundle an empty directory for the bundle
	 * @param shape its shape
	 * @param writable the one host directory the container may write, bound at its own
	 * path
	 */
	RuncContainer(Path bundle, Shape shape, Path writable) {
		this.bundle = bundle;
		this.shape = shape;
		this.writable = writable;
	}

	/**
	 * Write the bundle for {@code argv} and return the command line that runs it in the
	 * foreground, with runc's stdin, stdout and stderr as the container's.
	 * @param argv the container's process
	 * @param cwd its working directory
	 * @return the command line
	 * @throws IOException if the bundle cannot be written
	 */
	List<String> commandLine(List<String> argv, Path cwd) throws IOException {
		assertThat(RUNC).as("runc is installed (Debian package runc)").isExecutable();
		Path rootfs = Files.createDirectories(this.bundle.resolve("rootfs"));
		List<String> mounts = new ArrayList<>(List.of(mount("/proc", "proc", "proc", "nosuid", "noexec", "nodev"),
				mount("/dev", "tmpfs", "tmpfs", "nosuid", "strictatime", "mode=755", "size=65536k"),
				mount("/dev/pts", "devpts", "devpts", "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"),
				mount("/dev/shm", "tmpfs", "shm", "nosuid", "noexec", "nodev", "mode=1777", "size=65536k"),
				mount("/dev/mqueue", "mqueue", "mqueue", "nosuid", "noexec", "nodev"),
				mount("/sys", "sysfs", "sysfs", "nosuid", "noexec", "nodev", "ro"),
				mount("/tmp", "tmpfs", "tmpfs", "nosuid", "nodev", "mode=1777")));
		for (String top : List.of("/usr", "/etc", "/var", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")) {
			Path host = Path.of(top);
			if (Files.isSymbolicLink(host)) {
				Files.createSymbolicLink(rootfs.resolve(top.substring(1)), Files.readSymbolicLink(host));
			}
			else if (Files.isDirectory(host)) {
				mounts.add(bind(top, true));
			}
		}
		Path javaHome = Path.of(System.getProperty("java.home")).toRealPath();
		if (Stream.of("/usr/", "/etc/", "/var/").noneMatch((top) -> javaHome.toString().startsWith(top))) {
			mounts.add(bind(javaHome.toString(), true));
		}
		mounts.add(bind(this.writable.toRealPath().toString(), false));
		Files.writeString(this.bundle.resolve("config.json"), config(argv, cwd, mounts));
		return List.of(RUNC.toString(), "run", "--bundle", this.bundle.toString(), this.id);
	}

	private String config(List<String> argv, Path cwd, List<String> mounts) {
		String capabilities = strings(this.shape.capabilities);
		return "{\"ociVersion\":\"1.0.2\",\"process\":{\"terminal\":false,\"user\":{\"uid\":" + this.shape.uid
				+ ",\"gid\":" + this.shape.uid + "},\"args\":" + strings(argv) + ",\"env\":"
				+ strings(List.of("PATH=" + SandboxSettings.BASELINE_PATH, "HOME=/",
						ContainerJvm.SECRET_VARIABLE + "=" + ContainerJvm.SECRET))
				+ ",\"cwd\":" + string(cwd.toString()) + ",\"capabilities\":{\"bounding\":" + capabilities
				+ ",\"effective\":" + capabilities + ",\"permitted\":" + capabilities + "},\"noNewPrivileges\":"
				+ this.shape.noNewPrivileges + "},"
				+ "\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"hostname\":\"compat\",\"mounts\":["
				+ String.join(",", mounts) + "],\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},"
				+ "{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"}],\"resources\":{\"devices\":"
				+ "[{\"allow\":false,\"access\":\"rwm\"}]},\"maskedPaths\":"
				+ strings(List.of("/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
						"/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"))
				+ ",\"readonlyPaths\":" + strings(List.of("/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq",
						"/proc/sys", "/proc/sysrq-trigger"))
				+ ",\"seccomp\":" + seccomp() + "}}";
	}

	private static String seccomp() {
		List<String> rules = new ArrayList<>();
		rules.add("{\"names\":" + strings(REFUSED_EPERM) + ",\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1}");
		for (long flag : CLONE_NEW_FLAGS) {
			rules.add("{\"names\":[\"clone\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,\"args\":[{\"index\":0,"
					+ "\"value\":" + flag + ",\"valueTwo\":" + flag + ",\"op\":\"SCMP_CMP_MASKED_EQ\"}]}");
		}
		rules.add("{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38}");
		return "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\","
				+ "\"SCMP_ARCH_X32\"],\"syscalls\":[" + String.join(",", rules) + "]}";
	}

	private static String bind(String path, boolean readOnly) {
		return readOnly ? mount(path, "bind", path, "rbind", "ro", "nosuid", "nodev")
				: mount(path, "bind", path, "rbind", "nosuid", "nodev");
	}

	private static String mount(String destination, String type, String source, String... options) {
		return "{\"destination\":" + string(destination) + ",\"type\":" + string(type) + ",\"source\":" + string(source)
				+ ",\"options\":" + strings(List.of(options)) + "}";
	}

	private static String strings(List<String> values) {
		return values.stream().map(RuncContainer::string).collect(Collectors.joining(",", "[", "]"));
	}

	private static String string(String value) {
		StringBuilder json = new StringBuilder("\"");
		for (char c : value.toCharArray()) {
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c < 0x20) {
				json.append(String.format("\\u%04x", (int) c));
			}
			else {
				json.append(c);
			}
		}
		return json.append('"').toString();
	}

	/** Delete the container, killing what still runs in it. */
	@Override
	public void close() throws IOException, InterruptedException {
		Process delete = new ProcessBuilder(RUNC.toString(), "delete", "--force", this.id).redirectErrorStream(true)
			.start();
		delete.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
		if (!delete.waitFor(60, TimeUnit.SECONDS)) {
			delete.destroyForcibly();
		}
	}

}
