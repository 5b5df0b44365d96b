package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import dev.cavesandbox.NobodyCommandLines.Run;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The harness of the container tests ({@link ContainerConfinement}), shown to refuse what
 * a container refuses, and only that, as root and as nobody: each refusal has an
 * unconfined control that shows the same command works on this host.
 */
@Tag("container")
@EnabledOnOs(OS.LINUX)
class ContainerConfinementTests {

	/** Docker's default capability set as a mask (CapBnd in /proc/PID/status). */
	private static final String DOCKER_CAPABILITIES = "00000000a80425fb";

	private static final List<String> UNSHARE_NETWORK = List.of("unshare", "--user", "--map-root-user", "--net",
			"true");

	private static final List<String> UNSHARE_MOUNT = List.of("unshare", "--user", "--map-root-user", "--mount",
			"true");

	private static final List<String> BWRAP = List.of("bwrap", "--unshare-user", "--unshare-net", "--ro-bind", "/", "/",
			"true");

	@TempDir
	Path directory;

	@BeforeEach
	void assumeConfinementAvailable() {
		ContainerConfinement.assumeAvailable();
	}

	@ParameterizedTest
	@EnumSource(User.class)
	void dockerDefaultRefusesNamespacesAndKeepsInternetSockets(User user) throws Exception {
		Run unshare = confined(Profile.DOCKER_DEFAULT, user, List.of("unshare", "--user", "--net", "true"));
		assertThat(unshare.exitCode()).isNotZero();
		assertThat(unshare.output()).contains("unshare failed: Operation not permitted");
		Run bwrap = confined(Profile.DOCKER_DEFAULT, user, BWRAP);
		assertThat(bwrap.exitCode()).isNotZero();
		assertThat(bwrap.output()).contains("bwrap: ");
		Run inet = confined(Profile.DOCKER_DEFAULT, user, List.of(ContainerConfinement.PYTHON, "-c",
				"import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM).close(); print('inet socket')"));
		assertThat(inet.output()).isEqualTo("inet socket\n");
		assertThat(inet.exitCode()).isZero();
		assertControlWorks(user, List.of("unshare", "--user", "--net", "true"));
		assertControlWorks(user, BWRAP);
	}

	@ParameterizedTest
	@EnumSource(User.class)
	void dockerDefaultHasDockersCapabilitiesAndNoNewPrivileges(User user) throws Exception {
		Run status = confined(Profile.DOCKER_DEFAULT, user,
				List.of("grep", "-E", "^(CapBnd|NoNewPrivs|Seccomp|Uid):", "/proc/self/status"));
		assertThat(status.exitCode()).as(status.output()).isZero();
		assertThat(status.output()).contains("CapBnd:\t" + DOCKER_CAPABILITIES, "NoNewPrivs:\t1", "Seccomp:\t2")
			.contains((user == User.ROOT) ? "Uid:\t0\t0\t0\t0" : "Uid:\t65534\t65534\t65534\t65534");
	}

	@ParameterizedTest
	@EnumSource(User.class)
	void mountsRefusedAllowsNamespacesButNoMounts(User user) throws Exception {
		Run network = confined(Profile.MOUNTS_REFUSED, user, UNSHARE_NETWORK);
		assertThat(network.exitCode()).as(network.output()).isZero();
		Run mount = confined(Profile.MOUNTS_REFUSED, user, UNSHARE_MOUNT);
		assertThat(mount.exitCode()).isNotZero();
		assertThat(mount.output()).contains("cannot change root filesystem propagation: Operation not permitted");
		Run bwrap = confined(Profile.MOUNTS_REFUSED, user, BWRAP);
		assertThat(bwrap.exitCode()).isNotZero();
		assertThat(bwrap.output()).contains("Failed to make / slave");
		assertControlWorks(user, UNSHARE_MOUNT);
		assertControlWorks(user, BWRAP);
	}

	@ParameterizedTest
	@EnumSource(User.class)
	void mountsRefusedKeepsCapabilities(User user) throws Exception {
		Run status = confined(Profile.MOUNTS_REFUSED, user,
				List.of("grep", "-E", "^(CapBnd|NoNewPrivs):", "/proc/self/status"));
		assertThat(status.exitCode()).as(status.output()).isZero();
		assertThat(status.output()).doesNotContain(DOCKER_CAPABILITIES).contains("NoNewPrivs:\t1");
	}

	private Run confined(Profile profile, User user, List<String> argv) throws IOException, InterruptedException {
		return NobodyCommandLines.run(ContainerConfinement.commandLine(this.directory, profile, user, argv),
				this.directory);
	}

	/** The same command, unconfined, as the same user, works on this host. */
	private void assertControlWorks(User user, List<String> argv) throws IOException, InterruptedException {
		Run control = NobodyCommandLines.run((user == User.NOBODY) ? NobodyCommandLines.asNobody(argv) : argv,
				this.directory);
		assertThat(control.exitCode()).as("unconfined control %s: %s", argv, control.output()).isZero();
	}

}
