package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A command's attacks on the reader of its output files
 * ({@link ExecutionRequest.Builder#outputFiles}) in a JVM of an unprivileged user
 * (nobody, in a child JVM: {@link ContainerJvm}), on every mechanism: links to a file of
 * the JVM's user outside the working directory and to one only root reads, and a FIFO,
 * beside a regular file. The JVM's user reads the files of its commands, which run as it;
 * the links are not followed, the FIFO not opened, and the execution returns.
 * {@code OutputFileReaderTests} makes the same attacks on a root JVM.
 */
@EnabledOnOs(OS.LINUX)
class OutputFilesBreakInTests {

	@ForEachLinuxMechanism
	void anUnprivilegedJvmReadsItsCommandsFilesButNoLinkOrFifo(MechanismChoice mechanism, @TempDir Path directory)
			throws Exception {
		ContainerConfinement.assumeAvailable();
		try (ContainerJvm jvm = ContainerJvm.start(directory, Profile.UNCONFINED, User.NOBODY, mechanism)) {
			assertThat(jvm.verdict().available()).as("%s; log: %s", jvm.verdict(), jvm.log()).isTrue();
			// The log belongs to the JVM's user's test directory: a file of another of
			// its directories.
			Path log = directory.resolve("jvm.log");
			ContainerJvm.Result result = jvm.withOutputFiles("*.txt", "sh", "-c",
					"id -u > mine.txt && ln -s /etc/shadow shadow.txt && ln -s " + log + " log.txt"
							+ " && mkfifo fifo.txt");
			assertThat(result.exitCode()).as("%s; log: %s", result, jvm.log()).isZero();
			assertThat(result.outputs()).as("%s", result)
				.isEqualTo("mine.txt=65534\n\nskipped=fifo.txt,log.txt,shadow.txt");
			assertThat(Files.exists(log)).isTrue();
		}
	}

}
