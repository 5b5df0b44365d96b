package dev.cavesandbox;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

class NetworkIsolationProbeTests {

	@Test
	@EnabledOnOs(OS.LINUX)
	void verifiesIsolationOnThisHost() {
		IsolationCapability capability = new NetworkIsolationProbe(SandboxSettings.defaults()).probe();
		assertThat(capability.available()).as("%s", capability).isTrue();
		assertThat(capability.mechanism()).isEqualTo("unshare");
		assertThat(capability.cause()).isNull();
		assertThat(capability.verified()).anyMatch((fact) -> fact.startsWith("network namespace net:["))
			.contains("only interface: lo", "PID namespace: the command is PID 1");
		assertThat(capability.commandPrefix()).startsWith("/usr/bin/setpriv", "--pdeathsig", "KILL", "--",
				"/usr/bin/unshare");
		assertThat(capability.commandPrefix()).endsWith("--");
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void verifiedCommandLineAlsoIsolatesAnUnprivilegedUser() throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		IsolationCapability capability = new NetworkIsolationProbe(SandboxSettings.defaults()).probe();
		List<String> command = new ArrayList<>(
				List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"));
		command.addAll(capability.commandPrefix());
		command.addAll(List.of("/bin/sh", "-c", "id -u; echo pid=$$; tail -n +3 /proc/net/dev | cut -d: -f1"));
		Process process = new ProcessBuilder(command).directory(new File("/")).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor()).as(output).isZero();
		assertThat(output.lines().map(String::trim).toList()).containsExactly("65534", "pid=1", "lo");
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void missingUnshareBinaryIsNamed(@TempDir Path directory) {
		Path missing = directory.resolve("unshare");
		IsolationCapability capability = probe(SandboxSettings.builder().unsharePath(missing).build());
		assertThat(capability.available()).isFalse();
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING);
		assertThat(capability.detail()).contains(missing.toString());
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void nonExecutableUnshareBinaryIsNamed(@TempDir Path directory) throws IOException {
		Path file = Files.writeString(directory.resolve("unshare"), "not a program");
		IsolationCapability capability = probe(SandboxSettings.builder().unsharePath(file).build());
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_NOT_EXECUTABLE);
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void namespaceLimitZeroIsDetectedFromTheKernelsRealAnswer(@TempDir Path directory) throws IOException {
		Path unshare = RestrictedHost.unshareWithNamespaceLimitZero(directory);
		IsolationCapability capability = probe(SandboxSettings.builder().unsharePath(unshare).build());
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.NAMESPACE_LIMIT);
		assertThat(capability.detail()).contains("No space left on device");
		assertThat(capability.commandPrefix()).isEmpty();
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void aWrapperThatDoesNotIsolateIsNotVerified(@TempDir Path directory) throws IOException {
		Path fake = directory.resolve("fake-unshare");
		// Skips its options and runs the command in the host's namespaces: the probe must notice.
		Files.writeString(fake, "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done; shift; exec \"$@\"\n");
		fake.toFile().setExecutable(true);
		IsolationCapability capability = probe(SandboxSettings.builder().unsharePath(fake).build());
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(capability.detail()).contains("is not a new one");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "Windows 11|UNSUPPORTED_OS", "FreeBSD|UNSUPPORTED_OS", "SunOS|UNSUPPORTED_OS" })
	void operatingSystemsWithoutAPrimitiveAreUnsupported(String osName, UnavailabilityCause cause) {
		IsolationCapability capability = new NetworkIsolationProbe(SandboxSettings.defaults(), osName).probe();
		assertThat(capability.cause()).isEqualTo(cause);
		assertThat(capability.detail()).contains(osName);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = {
			"unshare: unshare failed: Operation not permitted|KERNEL_REFUSED",
			"unshare: unshare failed: No space left on device|NAMESPACE_LIMIT",
			"unshare: unshare failed: Invalid argument|USER_NAMESPACES_UNSUPPORTED",
			"unshare: write failed /proc/self/uid_map: Operation not permitted|UID_MAP_REFUSED",
			"unshare: cannot open /proc/self/setgroups: Permission denied|UID_MAP_REFUSED",
			"setpriv: something unexpected|UNKNOWN" })
	void wrapperMessagesAreClassified(String stderr, UnavailabilityCause cause) {
		assertThat(NetworkIsolationProbe.classify(stderr)).isEqualTo(cause);
	}

	private static IsolationCapability probe(SandboxSettings settings) {
		return new NetworkIsolationProbe(settings).probe();
	}

}
