package dev.cavesandbox.internal.launcher;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The argv shapes of {@link Launcher}; that the launcher itself accepts them and reports
 * exactly {@link Launcher#refusals(boolean, boolean)} is shown by running it
 * ({@code LauncherWithoutMountNamespaceTests}, the probe's tests).
 */
class LauncherTests {

	private final Launcher launcher = new Launcher(Path.of("/opt/cave-sandbox-launcher"), false);

	@Test
	void insideWithoutMountNamespaceAddsItsOptionLastBeforeTheCommand() {
		assertThat(this.launcher.inside(LauncherContract.CONTAIN, false, true, true, List.of("cmd", "arg")))
			.containsExactly("/proc/self/fd/4", "contain", "--check", "--no-mount-namespace", "--", "cmd", "arg");
		assertThat(new Launcher(Path.of("/l"), true).inside(LauncherContract.EXEC, true, false, true, List.of("cmd")))
			.containsExactly("/proc/self/fd/4", "exec", "--allow-inet", "--allow-userns", "--no-mount-namespace", "--",
					"cmd");
	}

	@Test
	void insideWithAMountNamespaceIsTheShapeOfLauncherVersionOne() {
		assertThat(this.launcher.inside(LauncherContract.INIT, true, true, List.of("cmd")))
			.isEqualTo(this.launcher.inside(LauncherContract.INIT, true, true, false, List.of("cmd")))
			.containsExactly("/proc/self/fd/4", "init", "--allow-inet", "--check", "--", "cmd");
	}

	@Test
	void unixDatagramSocketsComeFirstAmongTheRefusalsOnlyWithoutMountNamespace() {
		assertThat(this.launcher.refusals(false, true)).startsWith("socket(AF_UNIX, SOCK_DGRAM)",
				"socketpair(AF_UNIX, SOCK_DGRAM)");
		assertThat(this.launcher.refusals(false, true).subList(2, this.launcher.refusals(false, true).size()))
			.isEqualTo(this.launcher.refusals(false));
		assertThat(this.launcher.refusals(true)).isEqualTo(this.launcher.refusals(true, false))
			.doesNotContain("socket(AF_UNIX, SOCK_DGRAM)", "socket(AF_INET)");
	}

	@Test
	void withoutAPidNamespaceTheFilterAlsoRefusesLeavingTheProcessGroupAndPinningAnotherProcess() {
		List<String> contained = this.launcher.refusals(false, true, true);
		assertThat(contained).containsSubsequence("sched_setattr(pid)", "sched_setaffinity(pid)", "setsid", "setpgid",
				"unshare(CLONE_NEWUSER)");
		assertThat(
				contained.stream().filter((name) -> !name.equals("setpgid") && !name.equals("sched_setaffinity(pid)")))
			.containsExactlyElementsOf(this.launcher.refusals(false, true));
		assertThat(this.launcher.refusals(true, true)).doesNotContain("setpgid", "sched_setaffinity(pid)");
	}

	@Test
	void everyMechanismRefusesANewSession() {
		assertThat(this.launcher.refusals(false)).containsSubsequence("sched_setattr(pid)", "setsid",
				"unshare(CLONE_NEWUSER)");
		assertThat(this.launcher.refusals(true, true)).contains("setsid");
		assertThat(this.launcher.refusals(true, false, true)).contains("setsid");
	}

	@Test
	void limitsAreOptionsBeforeTheCommandEachOnlyWhenSetWithTheCpuTimeRoundedUp() {
		ResourceLimits limits = ResourceLimits.builder()
			.memory(268435456)
			.processes(64)
			.cpuTime(Duration.ofMillis(1500))
			.fileSize(1048576)
			.openFiles(32)
			.tmpfsSize(16777216)
			.build();
		assertThat(this.launcher.inside(LauncherContract.CONTAIN, false, false, true, limits, List.of("cmd")))
			.containsExactly("/proc/self/fd/4", "contain", "--no-mount-namespace", "--limit-memory", "268435456",
					"--limit-processes", "64", "--limit-cpu", "2", "--limit-file-size", "1048576", "--limit-open-files",
					"32", "--", "cmd");
		assertThat(this.launcher.inside(LauncherContract.EXEC, false, false, false,
				ResourceLimits.builder().processes(7).build(), List.of("--limit-cpu", "1")))
			.containsExactly("/proc/self/fd/4", "exec", "--limit-processes", "7", "--", "--limit-cpu", "1");
	}

	@Test
	void noLimitsIsTheShapeWithoutLimits() {
		assertThat(this.launcher.inside(LauncherContract.INIT, true, true, false, ResourceLimits.NONE, List.of("cmd")))
			.isEqualTo(this.launcher.inside(LauncherContract.INIT, true, true, List.of("cmd")));
	}

	@Test
	void commandUserGoesToOuterOnlyWhereItPreparesTheNamespaceAndAlwaysInside() {
		Launcher launcher = new Launcher(Path.of("/l"), false, 1234);
		assertThat(launcher.hasCommandUser()).isTrue();
		assertThat(launcher.outer(Path.of("/w"))).containsExactly("/l", "outer", "--workdir", "/w", "--command-user",
				"1234", "--");
		assertThat(launcher.outer(Path.of("/w"), false)).containsExactly("/l", "outer", "--workdir", "/w", "--");
		assertThat(launcher.outer(Path.of("/w"), true, List.of(Path.of("/a"), Path.of("/b/c")))).containsExactly("/l",
				"outer", "--workdir", "/w", "--listed", "/a", "--listed", "/b/c", "--command-user", "1234", "--");
		assertThat(Launcher.listedDescriptor(0)).isEqualTo(10);
		assertThat(Launcher.listedDescriptor(2)).isEqualTo(12);
		assertThat(launcher.inside(LauncherContract.EXEC, false, false, List.of("cmd")))
			.containsExactly(LauncherContract.INSIDE, "exec", "--command-user", "1234", "--", "cmd");
		assertThat(launcher.inside(LauncherContract.CONTAIN, false, false, true, List.of("cmd"))).containsExactly(
				LauncherContract.INSIDE, "contain", "--no-mount-namespace", "--command-user", "1234", "--", "cmd");
		assertThat(this.launcher.hasCommandUser()).isFalse();
		assertThat(this.launcher.outer(Path.of("/w"))).containsExactly("/opt/cave-sandbox-launcher", "outer",
				"--workdir", "/w", "--");
	}

	@Test
	void commandUserIsAUidOtherThanRoot() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Launcher(Path.of("/l"), false, 0));
		assertThatIllegalArgumentException().isThrownBy(() -> new Launcher(Path.of("/l"), false, -2));
		assertThatIllegalArgumentException().isThrownBy(() -> new Launcher(Path.of("/l"), false, 1L << 31));
		assertThat(new Launcher(Path.of("/l"), false, Integer.MAX_VALUE).commandUser()).isEqualTo(Integer.MAX_VALUE);
	}

	@Test
	void systemViewGivesReadsThenMasksThenWritesAfterTheCommandUserAndBeforeTheLimits() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/tmp")), true,
				List.of(Path.of("/usr"), Path.of("/etc")), Map.of(Path.of("/bin"), Path.of("usr/bin")),
				List.of(Path.of("/etc/shadow")), List.of(Path.of("/etc/ssh")), List.of(Path.of("/srv/in")),
				List.of(Path.of("/srv/out"), Path.of("/srv/log")));
		assertThat(new Launcher(Path.of("/l"), false, 1234).inside(LauncherContract.CONTAIN, false, true, true, view,
				ResourceLimits.builder().processes(7).build(), List.of("cmd")))
			.containsExactly(LauncherContract.INSIDE, "contain", "--check", "--no-mount-namespace", "--command-user",
					"1234", "--read", "/usr", "--read", "/etc", "--read", "/srv/in", "--mask", "/etc/shadow", "--mask",
					"/etc/ssh", "--write", "/srv/out", "--write", "/srv/log", "--limit-processes", "7", "--", "cmd");
	}

	/**
	 * The egress bridge: {@code outer --egress DIR} before the command user, and
	 * {@code --egress-port PORT} right after {@code --allow-inet}, only with a private
	 * loopback and never for {@code contain}.
	 */
	@Test
	void egressOpensItsDirectoryOutsideAndListensInsideOnlyWithALoopback() {
		Launcher egress = new Launcher(Path.of("/l"), false, 65534)
			.withEgress(new Launcher.Egress(Path.of("/tmp/cave-egress-1"), 3128));
		assertThat(egress.outer(Path.of("/w"), true)).containsExactly("/l", "outer", "--workdir", "/w", "--egress",
				"/tmp/cave-egress-1", "--command-user", "65534", "--");
		assertThat(egress.inside(LauncherContract.INIT, true, false, List.of("cmd"))).containsExactly("/proc/self/fd/4",
				"init", "--allow-inet", "--egress-port", "3128", "--command-user", "65534", "--", "cmd");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> egress.inside(LauncherContract.EXEC, false, false, List.of("cmd")))
			.withMessageContaining("private loopback");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> egress.inside(LauncherContract.CONTAIN, true, false, true, List.of("cmd")));
		assertThat(this.launcher.outer(Path.of("/w"), true)).doesNotContain("--egress");
		assertThatIllegalArgumentException().isThrownBy(() -> new Launcher.Egress(Path.of("relative"), 3128));
		assertThatIllegalArgumentException().isThrownBy(() -> new Launcher.Egress(Path.of("/d"), 0));
	}

	/**
	 * Only contain runs its command with a gid other than its uid: the user namespace of
	 * init and exec maps the command user's own uid and gid, nothing else, so a launcher
	 * whose group differs is refused there rather than run with a gid the namespace does
	 * not map.
	 */
	@Test
	void onlyContainTakesACommandGroupApartFromTheCommandUser() {
		Launcher launcher = new Launcher(this.launcher.path(), false, 65534).withCommandUser(65536);
		assertThat(launcher.inside(LauncherContract.CONTAIN, false, false, true, null, ResourceLimits.NONE,
				List.of("true")))
			.containsSequence("--command-user", "65536", "--command-group", "65534");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> launcher.inside(LauncherContract.EXEC, false, false, true, null, ResourceLimits.NONE,
					List.of("true")))
			.withMessageStartingWith("only contain runs its command with a gid other than its uid");
		assertThat(new Launcher(this.launcher.path(), false, 65534).inside(LauncherContract.EXEC, false, false, true,
				null, ResourceLimits.NONE, List.of("true")))
			.doesNotContain("--command-group");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new Launcher(this.launcher.path(), false, Launcher.CALLER, null, 65534));
	}

}
