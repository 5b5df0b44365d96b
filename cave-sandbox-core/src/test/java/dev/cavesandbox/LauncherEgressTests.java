package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.launcher.LauncherInstallation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's egress options run for real: each misuse is a set-up failure (exit 125)
 * with its reason, before any command runs. What the bridge does inside a sandbox is
 * shown by {@code EgressTests} and {@code EgressBreakInTests}.
 */
@EnabledOnOs(OS.LINUX)
class LauncherEgressTests {

	private static Path launcher() throws LauncherInstallation.UnavailableException {
		return LauncherInstallation.shared().resolve(SandboxSettings.builder().build());
	}

	@Test
	void theBridgePortNeedsThePrivateLoopback(@TempDir Path work) throws Exception {
		assertSetUpFails(work, "--egress-port needs --allow-inet", "exec", "--egress-port", "3128", "--", "touch",
				"ran");
	}

	@Test
	void theBridgeIsNotForContainWhichHasNoNetworkNamespace(@TempDir Path work) throws Exception {
		assertSetUpFails(work, "--egress-port is for init and exec", "contain", "--allow-inet", "--egress-port", "3128",
				"--", "touch", "ran");
	}

	@Test
	void theEgressDirectoryIsOpenedOnlyByOuter(@TempDir Path work) throws Exception {
		assertSetUpFails(work, "--egress is for outer", "exec", "--allow-inet", "--egress", work.toString(), "--",
				"touch", "ran");
	}

	@Test
	void aPortThatIsNotOneIsRefused(@TempDir Path work) throws Exception {
		assertSetUpFails(work, "--egress-port 65536 is not a port", "exec", "--allow-inet", "--egress-port", "65536",
				"--", "touch", "ran");
	}

	/**
	 * Without outer's descriptor there is no socket to relay to: no bridge, no command.
	 */
	@Test
	void theBridgeNeedsTheEgressDirectoryOfOuter(@TempDir Path work) throws Exception {
		assertSetUpFails(work, "needs the egress directory that outer opens", "exec", "--allow-inet", "--egress-port",
				"3128", "--", "touch", "ran");
	}

	/**
	 * A component of the egress directory that is a symbolic link is refused, as for the
	 * working directory: the bridge could otherwise be sent where the link points.
	 */
	@Test
	void anEgressDirectoryThroughASymbolicLinkIsRefused(@TempDir Path work, @TempDir Path elsewhere) throws Exception {
		Path link = Files.createSymbolicLink(work.resolve("link"), elsewhere);
		assertSetUpFails(work, "cannot open the egress directory " + link, "outer", "--workdir", work.toString(),
				"--egress", link.toString(), "--", "/usr/bin/touch", "ran");
	}

	private static void assertSetUpFails(Path work, String reason, String... arguments)
			throws IOException, InterruptedException, LauncherInstallation.UnavailableException {
		List<String> command = new ArrayList<>(List.of(launcher().toString()));
		command.addAll(List.of(arguments));
		Process process = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as(output).isEqualTo(125);
		assertThat(output).startsWith("cave-sandbox-launcher: ").contains(reason);
		assertThat(work.resolve("ran")).doesNotExist();
	}

}
