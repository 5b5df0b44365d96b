package dev.cavesandbox.internal.mechanism;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class UnshareMechanismTests {

	private static final FilesystemView HIDE_TMP_AND_RUN = FilesystemView.of(List.of(Path.of("/tmp"), Path.of("/run")),
			true);

	private static final FilesystemView SYSTEM = new FilesystemView(FilesystemView.Kind.SYSTEM,
			List.of(Path.of("/tmp"), Path.of("/dev/shm")), true, List.of(Path.of("/usr"), Path.of("/etc")),
			Map.of(Path.of("/lib"), Path.of("usr/lib"), Path.of("/bin"), Path.of("usr/bin")),
			List.of(Path.of("/etc/shadow")), List.of(Path.of("/etc/ssl/private")), List.of(Path.of("/srv/data")),
			List.of(Path.of("/srv/out")));

	private static final Launcher LAUNCHER = new Launcher(Path.of("/opt/cave/cave-sandbox-launcher"), false);

	private static UnshareMechanism mechanism(long uid, boolean keepUid, FilesystemView view) {
		return new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"), Path.of("/sbin/ip"),
				LAUNCHER, view, uid, uid, keepUid);
	}

	@Test
	void commandLineRunsTheSetupScriptInNewNamespacesThenTheArgv() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		List<String> command = mechanism.commandLine(List.of("echo", "hi"), Path.of("/srv/work"), false);
		assertThat(command).containsExactly("/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/srv/work", "--",
				"/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--user", "--map-root-user",
				"--net", "--mount", "--ipc", "--pid", "--fork", "--kill-child", "--mount-proc", "--", "/bin/sh", "-c",
				mechanism.setupScript(Path.of("/srv/work"), false), "cave-sandbox", "/proc/self/fd/4", "exec", "--",
				"echo", "hi");
	}

	@Test
	void setupHidesEachDirectoryBindsTheWorkingDirectoryAndRestoresTheCallersUid() {
		String script = mechanism(1000, true, HIDE_TMP_AND_RUN).setupScript(Path.of("/tmp/cave-sandbox-1"), false);
		assertThat(script).startsWith("set -e\nread -r _ _ n < /proc/self/uid_map\n")
			.contains("mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/tmp'\n"
					+ "mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/run'\n"
					+ "mkdir -p '/tmp/cave-sandbox-1'\nmount -n -c --bind . '/tmp/cave-sandbox-1'\n")
			.contains("case \"$m\" in '/tmp'|'/tmp'/*|'/run'|'/run'/*|'/tmp/cave-sandbox-1'|'/tmp/cave-sandbox-1'/*) "
					+ "continue ;; esac\n")
			.contains("  case \"$m\" in /sys/*) case \" $rest \" in *\" - sysfs \"*|*\" - cgroup \"*|")
			.contains("  remount \"$m\" \"$o\" ,ro\n")
			.endsWith(
					"cd '/tmp/cave-sandbox-1'\nunset OLDPWD\nexec '/usr/bin/unshare' --user --map-user=65534 --map-group=65534 -- /proc/self/fd/4 pid1 -- '/usr/bin/unshare' --user "
							+ "--map-user=1000 --map-group=1000 -- \"$@\"\n")
			.doesNotContain("/proc/sys")
			.doesNotContain("link set lo up");
	}

	@Test
	void rootCallerGetsReadOnlySysctlsAndTheLauncherDropsItsCapabilities() {
		String script = mechanism(0, true, HIDE_TMP_AND_RUN).setupScript(Path.of("/srv/work"), false);
		assertThat(script).contains("mount -n -o bind,ro /proc/sys /proc/sys\n")
			.endsWith(
					"exec '/usr/bin/unshare' --user --map-user=65534 --map-group=65534 -- /proc/self/fd/4 pid1 -- '/usr/bin/unshare' --user --map-user=0 --map-group=0 -- "
							+ "\"$@\"\n")
			.doesNotContain("setpriv");
	}

	@Test
	void olderUtilLinuxStaysRootAndTheLauncherDropsItsCapabilities() {
		String script = mechanism(1000, false, HIDE_TMP_AND_RUN).setupScript(Path.of("/srv/work"), false);
		assertThat(script).endsWith("\nexec /proc/self/fd/4 pid1 -- \"$@\"\n")
			.doesNotContain("--map-user")
			.doesNotContain("setpriv");
	}

	@Test
	void loopbackIsBroughtUpWithIp() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.setupScript(Path.of("/srv/work"), true)).contains("'/sbin/ip' link set lo up\n");
		assertThat(mechanism.supportsPrivateLoopback()).isTrue();
		UnshareMechanism withoutIp = new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"),
				null, LAUNCHER, HIDE_TMP_AND_RUN, 1000, 1000, true);
		assertThat(withoutIp.supportsPrivateLoopback()).isFalse();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> withoutIp.commandLine(List.of("true"), Path.of("/srv/work"), true))
			.withMessageContaining("iproute2");
	}

	@Test
	void writableRootWithAWorkingDirectoryOutsideTheHiddenOnesBindsOnlyItNosuid() {
		String script = mechanism(1000, true, FilesystemView.of(List.of(Path.of("/run")), false))
			.setupScript(Path.of("/srv/work"), false);
		assertThat(script).contains("mount -n -c --bind . '/srv/work'\n")
			.contains("flags '/srv/work'; remount '/srv/work' \"$f\" ,nosuid,nodev\n")
			.contains("for k in /proc/keys /proc/key-users; do if [ -e $k ]; then mount -n --bind /dev/null $k; fi; "
					+ "done\n")
			.contains("\ncd '/srv/work'\n")
			.doesNotContain("mkdir -p '")
			.doesNotContain("remount \"$m\"");
	}

	/**
	 * Paths are data, never code: a working directory with quotes, spaces and shell
	 * syntax is quoted, and the script still parses ({@code sh -n}).
	 */
	@Test
	@EnabledOnOs({ OS.LINUX, OS.MAC })
	void hostilePathsAreQuotedAndTheScriptParses() throws IOException, InterruptedException {
		Path directory = Path.of("/tmp/it's a $(dangerous) `dir`; rm -rf ~");
		UnshareMechanism mechanism = mechanism(0, true,
				FilesystemView.of(List.of(Path.of("/tmp"), Path.of("/run/o'clock")), true));
		String script = mechanism.setupScript(directory, true);
		assertThat(script).contains("mkdir -p '/tmp/it'\\''s a $(dangerous) `dir`; rm -rf ~'\n");
		Process syntaxCheck = new ProcessBuilder("/bin/sh", "-n", "-c", script).redirectErrorStream(true).start();
		String output = new String(syntaxCheck.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(syntaxCheck.waitFor()).as(output).isZero();
	}

	@Test
	void binariesAndName() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.binaries()).containsExactly(Path.of("/opt/cave/cave-sandbox-launcher"),
				Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"));
		assertThat(mechanism.name()).isEqualTo("unshare");
	}

	@Test
	void hidesWhatLiesInAHiddenDirectoryAndNothingElse() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.hides(Path.of("/run"))).isTrue();
		assertThat(mechanism.hides(Path.of("/tmp/.X11-unix/X0"))).isTrue();
		assertThat(mechanism.hides(Path.of("/var/lib/socket"))).isFalse();
		assertThat(mechanism.hides(Path.of("/runner"))).isFalse();
	}

	@Test
	void loopbackAndCheckReachTheLauncher() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/srv/work"), true, true)).endsWith("cave-sandbox",
				"/proc/self/fd/4", "exec", "--allow-inet", "--check", "--", "true");
	}

	@Test
	void nullBinaryOrFilesystemIsRejectedButIpIsOptional() {
		assertThatNullPointerException()
			.isThrownBy(() -> new UnshareMechanism(null, Path.of("/usr/bin/unshare"), null, LAUNCHER, HIDE_TMP_AND_RUN,
					0, 0, true))
			.withMessage("setpriv must not be null");
		assertThatNullPointerException()
			.isThrownBy(() -> new UnshareMechanism(Path.of("/usr/bin/setpriv"), null, null, LAUNCHER, HIDE_TMP_AND_RUN,
					0, 0, true))
			.withMessage("unshare must not be null");
		assertThatNullPointerException()
			.isThrownBy(() -> new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"), null,
					LAUNCHER, null, 0, 0, true))
			.withMessage("filesystem must not be null");
	}

	@Test
	void readOnlyRootBindsTheWorkingDirectoryBackSoThatItStaysWritable() {
		String script = mechanism(1000, true, HIDE_TMP_AND_RUN).setupScript(Path.of("/srv/work"), false);
		assertThat(script)
			.contains("mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/run'\n"
					+ "mount -n -c --bind . '/srv/work'\nflags '/srv/work'; remount '/srv/work' \"$f\" ,nosuid,nodev\n"
					+ "while read -r")
			.contains("\ncd '/srv/work'\nunset OLDPWD\nexec '/usr/bin/unshare' --user --map-user=65534 ");
	}

	@Test
	void writableRootStillBindsAWorkingDirectoryInAHiddenDirectory() {
		String script = mechanism(1000, true, FilesystemView.of(List.of(Path.of("/run")), false))
			.setupScript(Path.of("/run/cave-sandbox-1"), false);
		assertThat(script)
			.contains("mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/run'\n"
					+ "mkdir -p '/run/cave-sandbox-1'\nmount -n -c --bind . '/run/cave-sandbox-1'\n")
			.contains("flags '/run/cave-sandbox-1'; remount '/run/cave-sandbox-1' \"$f\" ,nosuid,nodev\n")
			.contains("\ncd '/run/cave-sandbox-1'\n")
			.doesNotContain("remount \"$m\"");
	}

	@Test
	void commandLineWithLoopbackRunsTheScriptThatBringsLoUp() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		List<String> command = mechanism.commandLine(List.of("true"), Path.of("/srv/work"), true);
		assertThat(command.get(command.indexOf("-c") + 1)).isEqualTo(mechanism.setupScript(Path.of("/srv/work"), true))
			.contains("'/sbin/ip' link set lo up\n");
	}

	@Test
	void withoutIpEverythingButALoopbackStillWorks() {
		UnshareMechanism withoutIp = new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"),
				null, LAUNCHER, HIDE_TMP_AND_RUN, 1000, 1000, true);
		List<String> command = withoutIp.commandLine(List.of("true"), Path.of("/srv/work"), false);
		assertThat(command).endsWith("cave-sandbox", "/proc/self/fd/4", "exec", "--", "true");
		assertThat(command.get(command.indexOf("-c") + 1)).doesNotContain("link set lo up");
	}

	@Test
	void tmpfsSizeIsAMountOptionOfEachHiddenTmpfsAndTheOtherLimitsGoToTheLauncher() {
		UnshareMechanism mechanism = mechanism(1000, true, HIDE_TMP_AND_RUN);
		List<String> command = mechanism.commandLine(List.of("true"), Path.of("/srv/work"), false, false,
				ResourceLimits.builder().tmpfsSize(16777216).fileSize(1048576).build());
		String script = command.get(command.indexOf("-c") + 1);
		assertThat(script).contains("mount -n -t tmpfs -o mode=1777,nosuid,nodev,size=16777216 cave-sandbox '/tmp'\n")
			.contains("mount -n -t tmpfs -o mode=1777,nosuid,nodev,size=16777216 cave-sandbox '/run'\n");
		assertThat(command.subList(command.indexOf("cave-sandbox") + 1, command.size()))
			.containsExactly("/proc/self/fd/4", "exec", "--limit-file-size", "1048576", "--", "true");
		assertThat(mechanism.setupScript(Path.of("/srv/work"), false)).doesNotContain("size=");
	}

	/**
	 * A root JVM's command user: outer has joined the user namespace, so unshare creates
	 * none and no nested one gives the caller's uid back; the launcher switches to the
	 * command user.
	 */
	@Test
	void commandUserLeavesTheUserNamespaceToOuterAndTheUidToTheLauncher() {
		UnshareMechanism mechanism = new UnshareMechanism(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/unshare"),
				Path.of("/sbin/ip"), new Launcher(Path.of("/l"), false, 65534), HIDE_TMP_AND_RUN, 0, 0, true);
		List<String> command = mechanism.commandLine(List.of("id"), Path.of("/srv/work"), false);
		assertThat(command)
			.startsWith("/l", "outer", "--workdir", "/srv/work", "--command-user", "65534", "--", "/usr/bin/setpriv",
					"--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--net", "--mount")
			.endsWith("/proc/self/fd/4", "exec", "--command-user", "65534", "--", "id")
			.doesNotContain("--user", "--map-root-user");
		assertThat(mechanism.setupScript(Path.of("/srv/work"), false)).doesNotContain("--map-user");
	}

	/**
	 * A system view: a new root on a tmpfs over the first hidden directory, the system
	 * directories, links, masks, /dev, a new proc, the hidden directories and the listed
	 * paths in it, then pivot_root, the host's root detached, and the read-only pass.
	 */
	@Test
	void systemViewBuildsANewRootPivotsIntoItAndDetachesTheHostRoot() {
		String script = mechanism(0, true, SYSTEM).setupScript(Path.of("/srv/work"), false);
		assertThat(script).contains("mount -n -t tmpfs -o mode=755,nosuid,nodev cave-sandbox '/tmp'\n"
				+ "mkdir -p '/tmp/usr' '/tmp/etc' '/tmp/dev' '/tmp/proc' '/tmp/tmp' '/tmp/dev/shm'\n"
				+ "mount -n -c --rbind '/usr' '/tmp/usr'\nmount -n -c --rbind '/etc' '/tmp/etc'\n"
				+ "ln -s 'usr/bin' '/tmp/bin'\nln -s 'usr/lib' '/tmp/lib'\n" + "mount -n -c --rbind /dev '/tmp/dev'\n"
				+ "mount -n -t proc -o nosuid,nodev,noexec proc '/tmp/proc'\n"
				+ "mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/tmp/tmp'\n"
				+ "mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/tmp/dev/shm'\n"
				+ "bind 10 '/srv/out' '/tmp/srv/out' ,nosuid,nodev\nbind 11 '/srv/data' '/tmp/srv/data' ,ro\n"
				+ "mkdir -p '/tmp/srv/work'\nmount -n -c --bind . '/tmp/srv/work'\n"
				+ "flags '/tmp/srv/work'; remount '/tmp/srv/work' \"$f\" ,nosuid,nodev\n"
				+ "mount -n -c --bind /dev/null '/tmp/etc/shadow'\n"
				+ "mount -n -t tmpfs -o ro,mode=755,nosuid,nodev,noexec cave-sandbox '/tmp/etc/ssl/private'\n"
				+ "cd '/tmp'\npivot_root . .\numount -n -l .\nwhile read -r")
			.contains("case \"$m\" in '/srv/out'|'/etc/shadow'|'/tmp'|'/tmp'/*|'/dev/shm'|'/dev/shm'/*|'/srv/work'|"
					+ "'/srv/work'/*) " + "continue ;; esac\n")
			.contains("mount -n -o bind,ro /proc/sys /proc/sys\n")
			.endsWith(
					"cd '/srv/work'\nunset OLDPWD\nexec '/usr/bin/unshare' --user --map-user=65534 --map-group=65534 -- /proc/self/fd/4 pid1 -- '/usr/bin/unshare' --user --map-user=0 "
							+ "--map-group=0 -- \"$@\"\n");
	}

	@Test
	void systemViewPutsItsNewRootOverAHiddenDirectoryThatHoldsNoListedPath() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.SYSTEM,
				List.of(Path.of("/tmp"), Path.of("/dev/shm"), Path.of("/run")), true, List.of(Path.of("/usr")),
				Map.of(), List.of(), List.of(), List.of(Path.of("/tmp/input")), List.of());
		assertThat(mechanism(1000, true, view).setupScript(Path.of("/srv/work"), false))
			.contains("mount -n -t tmpfs -o mode=755,nosuid,nodev cave-sandbox '/run'\n")
			.doesNotContain("cave-sandbox '/tmp'\n")
			.doesNotContain("cave-sandbox '/dev/shm'\n");
		FilesystemView none = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/dev/shm")), true,
				List.of(Path.of("/usr")), Map.of(), List.of(), List.of(), List.of(), List.of());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> mechanism(1000, true, none).commandLine(List.of("true"), Path.of("/w"), false))
			.withMessageContaining("a system view needs a hidden directory");
	}

	@Test
	void hostViewBindsTheListedPathsAndLeavesTheWritableOnesOutOfTheReadOnlyPass() {
		FilesystemView view = HIDE_TMP_AND_RUN.withPaths(List.of(Path.of("/run/in")), List.of(Path.of("/srv/out")));
		String script = mechanism(1000, true, view).setupScript(Path.of("/srv/work"), false);
		assertThat(script)
			.contains("mount -n -t tmpfs -o mode=1777,nosuid,nodev cave-sandbox '/run'\n"
					+ "bind 10 '/srv/out' '/srv/out' ,nosuid,nodev\nbind 11 '/run/in' '/run/in' ,ro\n"
					+ "mount -n -c --bind . '/srv/work'\n")
			.contains("case \"$m\" in '/srv/out'|'/tmp'|")
			.doesNotContain("pivot_root");
	}

	/**
	 * outer opens the listed paths in the order the script binds them; the script's
	 * {@code bind} makes the mount point by the descriptor's file type and refuses a
	 * mount that is not the descriptor's file (a component swapped after outer opened
	 * it).
	 */
	@Test
	void listedPathsAreOpenedByOuterAndEachBindIsCheckedAgainstItsDescriptor() {
		FilesystemView view = HIDE_TMP_AND_RUN.withPaths(List.of(Path.of("/run/in")), List.of(Path.of("/srv/out")));
		List<String> command = mechanism(1000, true, view).commandLine(List.of("id"), Path.of("/w"), false);
		assertThat(command.subList(0, command.indexOf("--pdeathsig") - 1)).containsExactly(
				"/opt/cave/cave-sandbox-launcher", "outer", "--workdir", "/w", "--listed", "/srv/out", "--listed",
				"/run/in", "--");
		assertThat(mechanism(1000, true, view).setupScript(Path.of("/w"), false))
			.contains("bind() { d=/proc/self/fd/$1; if [ ! -e \"$3\" ]; then if [ -d \"$d\" ]; then mkdir -p \"$3\"; "
					+ "else mkdir -p \"${3%/*}\"; : > \"$3\"; fi; fi\n  mount -n -c --rbind \"$2\" \"$3\"\n"
					+ "  [ \"$(stat -L -c %d:%i \"$d\")\" = \"$(stat -c %d:%i \"$3\")\" ] || { echo \"cave-sandbox: the "
					+ "listed path $2 is not the one the launcher opened: it changed during set-up\" >&2; exit 125; }\n");
	}

}
