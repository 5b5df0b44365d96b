package dev.cavesandbox;

import java.nio.file.Path;
import java.util.stream.Stream;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Strict mode in a container: a child JVM ({@link ContainerJvm}) in each confinement of
 * {@link ContainerConfinement}, as root and as nobody, probes with mechanism AUTO and
 * runs commands.
 */
@EnabledOnOs(OS.LINUX)
class ContainerRungsTests {

	@TempDir
	Path directory;

	@BeforeEach
	void assumeConfinementAvailable() {
		ContainerConfinement.assumeAvailable();
	}

	static Stream<Arguments> containers() {
		return Stream.of(Profile.values())
			.flatMap((profile) -> Stream.of(User.values()).map((user) -> Arguments.of(profile, user)));
	}

	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void strictModeFailsClosedWithTheKernelsRefusal(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(this.directory, profile, user, MechanismChoice.AUTO)) {
			ContainerJvm.Verdict verdict = jvm.verdict();
			assertThat(verdict.available()).as("%s", verdict).isFalse();
			assertThat(verdict.cause()).as("%s", verdict)
				.isEqualTo((profile == Profile.DOCKER_DEFAULT) ? UnavailabilityCause.KERNEL_REFUSED
						: UnavailabilityCause.UNKNOWN);
			ContainerJvm.Result refused = jvm.isolated("true");
			assertThat(refused.error()).isEqualTo(NetworkIsolationUnavailableException.CODE);
			ContainerJvm.Result control = jvm.unisolated("sh", "-c",
					"id -u; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status");
			assertThat(control.exitCode()).as(control.stderr()).isZero();
			assertThat(control.stdout())
				.isEqualTo(((user == User.ROOT) ? "0" : "65534") + "\nNoNewPrivs:\t1\nSeccomp:\t2\n");
		}
	}

}
