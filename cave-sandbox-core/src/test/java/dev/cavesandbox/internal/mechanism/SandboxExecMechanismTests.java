package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SandboxExecMechanismTests {

	@Test
	void profileDeniesTheNetworkIncludingUnixSocketsAndWritesOutsideTheWorkingDirectory() {
		assertThat(new SandboxExecMechanism(Path.of("/usr/bin/sandbox-exec"), true).profile())
			.isEqualTo("(version 1)\n(allow default)\n(deny network*)\n(deny file-write*)\n"
					+ "(allow file-write* (subpath (param \"WORKDIR\")) (subpath \"/dev\"))\n");
	}

	@Test
	void writableRootProfileOnlyDeniesTheNetwork() {
		assertThat(new SandboxExecMechanism(Path.of("/usr/bin/sandbox-exec"), false).profile())
			.isEqualTo("(version 1)\n(allow default)\n(deny network*)\n");
	}

	@Test
	void commandLinePassesTheProfileAndTheWorkingDirectoryThenTheArgv() {
		SandboxExecMechanism mechanism = new SandboxExecMechanism(Path.of("/usr/bin/sandbox-exec"), true);
		assertThat(mechanism.commandLine(List.of("/bin/echo", "hi"), Path.of("/private/var/folders/x/T/cave-1"), false))
			.containsExactly("/usr/bin/sandbox-exec", "-p", mechanism.profile(),
					"-DWORKDIR=/private/var/folders/x/T/cave-1", "--", "/bin/echo", "hi");
	}

	@Test
	void privateLoopbackIsImpossibleWithoutNetworkNamespaces() {
		SandboxExecMechanism mechanism = new SandboxExecMechanism(Path.of("/usr/bin/sandbox-exec"), true);
		assertThat(mechanism.supportsPrivateLoopback()).isFalse();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> mechanism.commandLine(List.of("true"), Path.of("/private/tmp"), true))
			.withMessageContaining("no network namespaces");
		assertThat(mechanism.name()).isEqualTo("sandbox-exec");
		assertThat(mechanism.binaries()).containsExactly(Path.of("/usr/bin/sandbox-exec"));
	}

	@Test
	void hidesNoPathBecauseItDeniesSocketsRatherThanMountingOverThem() {
		SandboxExecMechanism mechanism = new SandboxExecMechanism(Path.of("/usr/bin/sandbox-exec"), true);
		assertThat(mechanism.hides(Path.of("/tmp"))).isFalse();
		assertThat(mechanism.hides(Path.of("/private/var/run/mDNSResponder"))).isFalse();
	}

}
