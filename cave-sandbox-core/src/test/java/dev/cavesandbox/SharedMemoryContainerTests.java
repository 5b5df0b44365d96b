package dev.cavesandbox;

import java.nio.file.Path;
import java.util.stream.Stream;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Python's multiprocessing (POSIX semaphores and shared memory, issue 28) in a child JVM
 * ({@link ContainerJvm}) on the mechanisms without a mount namespace, as root and as
 * nobody: in Docker's default shape (seccomp), where mounts are refused (namespaces), and
 * an unprivileged host JVM that chose either mechanism.
 */
@Tag("container")
@EnabledOnOs(OS.LINUX)
class SharedMemoryContainerTests {

	@TempDir
	Path directory;

	@BeforeEach
	void assumeConfinementAvailable() {
		ContainerConfinement.assumeAvailable();
	}

	static Stream<Arguments> shapes() {
		return Stream.of(Arguments.of(Profile.DOCKER_DEFAULT, User.ROOT, MechanismChoice.AUTO, "seccomp"),
				Arguments.of(Profile.DOCKER_DEFAULT, User.NOBODY, MechanismChoice.AUTO, "seccomp"),
				Arguments.of(Profile.MOUNTS_REFUSED, User.ROOT, MechanismChoice.AUTO, "namespaces"),
				Arguments.of(Profile.MOUNTS_REFUSED, User.NOBODY, MechanismChoice.AUTO, "namespaces"),
				Arguments.of(Profile.UNCONFINED, User.NOBODY, MechanismChoice.NAMESPACES, "namespaces"),
				Arguments.of(Profile.UNCONFINED, User.NOBODY, MechanismChoice.SECCOMP, "seccomp"));
	}

	@ParameterizedTest(name = "{0} as {1}, {2}")
	@MethodSource("shapes")
	@Timeout(300)
	void pythonMultiprocessingPoolAndSharedMemoryWork(Profile profile, User user, MechanismChoice mechanism,
			String expected) throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(this.directory, profile, user, mechanism)) {
			ContainerJvm.Verdict verdict = jvm.verdict();
			assertThat(verdict.available()).as("%s; log: %s", verdict, jvm.log()).isTrue();
			assertThat(verdict.mechanism()).isEqualTo(expected);
			ContainerJvm.Result result = jvm.isolated(ContainerConfinement.PYTHON, "-c", SharedMemoryTests.POOL, "fork",
					"spawn");
			assertThat(result.error()).as(result.stderr()).isNull();
			assertThat(result.exitCode()).as(result.stderr()).isZero();
			assertThat(result.stdout()).isEqualTo("fork [1, 2]\nspawn [1, 2]\nshared_memory 7\n");
			assertThat(result.isolation()).contains(expected);
		}
	}

}
