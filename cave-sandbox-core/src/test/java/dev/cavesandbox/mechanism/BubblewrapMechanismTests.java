package dev.cavesandbox.mechanism;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class BubblewrapMechanismTests {

	private static final FilesystemView HIDE_TMP_AND_RUN = FilesystemView.of(List.of(Path.of("/tmp"), Path.of("/run")),
			true);

	@Test
	void commandLineIsolatesDiesWithItsParentAndDropsEveryCapability() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), HIDE_TMP_AND_RUN)
			.commandLine(List.of("echo", "hi"), Path.of("/srv/work"), false);
		assertThat(command).containsExactly("/usr/bin/bwrap", "--die-with-parent", "--new-session", "--unshare-user",
				"--unshare-net", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev",
				"/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try",
				"/proc/sysrq-trigger", "/proc/sysrq-trigger", "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777",
				"--tmpfs", "/run", "--bind", "/srv/work", "/srv/work", "--chdir", "/srv/work", "--", "echo", "hi");
	}

	@Test
	void workingDirectoryInAHiddenDirectoryIsBoundAfterTheTmpfs() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), HIDE_TMP_AND_RUN)
			.commandLine(List.of("true"), Path.of("/tmp/cave-sandbox-1"), false);
		assertThat(String.join(" ", command))
			.contains("--tmpfs /tmp --perms 1777 --tmpfs /run --bind /tmp/cave-sandbox-1 /tmp/cave-sandbox-1 "
					+ "--chdir /tmp/cave-sandbox-1 -- true");
	}

	@Test
	void writableRootBindsTheHostReadWriteAndNeedsNoSecondBind() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"),
				FilesystemView.of(List.of(Path.of("/run")), false))
			.commandLine(List.of("true"), Path.of("/srv/work"), false);
		assertThat(String.join(" ", command)).contains("--bind / / --dev /dev")
			.doesNotContain("--ro-bind / /")
			.doesNotContain("--bind /srv/work")
			.endsWith("--chdir /srv/work -- true");
	}

	@Test
	void argvThatLooksLikeOptionsStaysTheCommand() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), HIDE_TMP_AND_RUN)
			.commandLine(List.of("--help", "--unshare-all"), Path.of("/srv/work"), false);
		assertThat(command.subList(command.indexOf("--") + 1, command.size())).containsExactly("--help",
				"--unshare-all");
	}

	@Test
	void loopbackIsAlwaysPrivateAndUp() {
		BubblewrapMechanism mechanism = new BubblewrapMechanism(Path.of("/opt/bwrap"), HIDE_TMP_AND_RUN);
		assertThat(mechanism.supportsPrivateLoopback()).isTrue();
		assertThat(mechanism.commandLine(List.of("true"), Path.of("/w"), true))
			.isEqualTo(mechanism.commandLine(List.of("true"), Path.of("/w"), false));
		assertThat(mechanism.binaries()).containsExactly(Path.of("/opt/bwrap"));
		assertThat(mechanism.name()).isEqualTo("bwrap");
	}

	@Test
	void hidesWhatLiesInAHiddenDirectoryAndNothingElse() {
		BubblewrapMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), HIDE_TMP_AND_RUN);
		assertThat(mechanism.hides(Path.of("/tmp"))).isTrue();
		assertThat(mechanism.hides(Path.of("/run/docker.sock"))).isTrue();
		assertThat(mechanism.hides(Path.of("/srv/work/socket"))).isFalse();
		assertThat(mechanism.hides(Path.of("/tmpfoo"))).isFalse();
	}

	@Test
	void nullBinaryOrFilesystemIsRejected() {
		assertThatNullPointerException().isThrownBy(() -> new BubblewrapMechanism(null, HIDE_TMP_AND_RUN))
			.withMessage("bwrap must not be null");
		assertThatNullPointerException().isThrownBy(() -> new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), null))
			.withMessage("filesystem must not be null");
	}

	@Test
	void writableRootStillBindsAWorkingDirectoryInAHiddenDirectory() {
		List<String> command = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"),
				FilesystemView.of(List.of(Path.of("/run")), false))
			.commandLine(List.of("true"), Path.of("/run/cave-sandbox-1"), false);
		assertThat(String.join(" ", command)).contains("--bind / / --dev /dev")
			.endsWith("--perms 1777 --tmpfs /run --bind /run/cave-sandbox-1 /run/cave-sandbox-1 "
					+ "--chdir /run/cave-sandbox-1 -- true");
	}

}
