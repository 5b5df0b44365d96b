package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A program binds and connects unix sockets of its own beneath its private working
 * directory (TMPDIR), with the long names real programs use: Chromium's
 * {@code org.chromium.Chromium.XXXXXX/SingletonSocket}, a 60-byte name, and a path of the
 * whole 107 bytes that {@code sun_path} holds. Only {@code bwrap} and {@code unshare}:
 * the mechanisms without a mount namespace refuse {@code socket(AF_UNIX)} (README, the
 * mechanisms without a mount namespace).
 */
@EnabledOnOs(OS.LINUX)
class PrivateDirectorySocketTests {

	private static final String PROGRAM = """
			import os, socket, sys
			tmp = os.environ['TMPDIR']
			print('TMPDIR %d %s' % (len(tmp), tmp))
			assert os.getcwd() == tmp, os.getcwd()
			chromium = os.path.join(tmp, 'org.chromium.Chromium.aB3dE9')
			os.mkdir(chromium, 0o700)
			paths = {
			    'chromium': chromium + '/SingletonSocket',
			    'sixty': tmp + '/' + 's' * 60,
			    'full': tmp + '/' + 'f' * (107 - len(tmp) - 1),
			}
			for name, path in paths.items():
			    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
			    server.bind(path)
			    server.listen(1)
			    pid = os.fork()
			    if pid == 0:
			        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
			        client.connect(path)
			        client.sendall(name.encode())
			        client.close()
			        os._exit(0)
			    connection, _ = server.accept()
			    received = connection.recv(100).decode()
			    os.waitpid(pid, 0)
			    print('%s %d bytes: %s' % (name, len(path.encode()), received))
			""";

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE" })
	void programBindsAndConnectsItsOwnSocketsWithLongNamesInItsPrivateDirectory(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.workDirectory(Path.of("/tmp")).timeout(Duration.ofSeconds(60)))) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder("python3", "-c", PROGRAM).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			String output = result.stdoutText();
			String tmpdir = output.lines().findFirst().orElseThrow().split(" ")[2];
			assertThat(tmpdir).matches("/tmp/cave-sandbox-[0-9]+/[0-9a-z]{9}");
			int length = tmpdir.length();
			assertThat(output).contains("chromium " + (length + 1 + 44) + " bytes: chromium",
					"sixty " + (length + 61) + " bytes: sixty", "full 107 bytes: full");
		}
	}

}
