package dev.cavesandbox.autoconfigure;

import java.time.Duration;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.UnavailabilityCause;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;

class NetworkIsolationUnavailableFailureAnalyzerTests {

	@Test
	void analysisNamesTheCauseTheDetailAndEveryWayOut() {
		IsolationCapability capability = IsolationCapability.unavailable(UnavailabilityCause.NAMESPACE_LIMIT,
				"exit 1: unshare: unshare failed: No space left on device", Duration.ofMillis(3));
		BeanCreationException failure = new BeanCreationException("isolatedExecutor",
				new NetworkIsolationUnavailableException(capability));
		FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer().analyze(failure);
		assertThat(analysis.getDescription()).contains("cave_sandbox_os_network_isolation_unavailable")
			.contains("NAMESPACE_LIMIT")
			.contains("user namespace limit")
			.contains("No space left on device")
			.contains("failed closed");
		assertThat(analysis.getAction()).contains("sysctl -w user.max_user_namespaces")
			.contains("cave.sandbox.mode=fallback")
			.contains("cave.sandbox.fail-fast=false");
	}

	@Test
	void actionNamesThePropertiesThatFixTheCause() {
		IsolationCapability capability = HostSandboxes.missingUnshare();
		FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer().analyze(
				new BeanCreationException("isolatedExecutor", new NetworkIsolationUnavailableException(capability)));
		assertThat(analysis.getDescription()).contains("BINARY_MISSING")
			.contains(HostSandboxes.MISSING_UNSHARE + " does not exist");
		assertThat(analysis.getAction()).contains("install bubblewrap")
			.contains("cave.sandbox.linux.bwrap-path / unshare-path / setpriv-path")
			.contains("cave.sandbox.macos.sandbox-exec-path")
			.doesNotContain("bwrapPath")
			.doesNotContain("sandboxExecPath");
	}

	/**
	 * Fallback is offered for every cause it can help with, and never for an unusable
	 * work directory: unisolated runs need their private directories too.
	 */
	@ParameterizedTest
	@EnumSource(UnavailabilityCause.class)
	void fallbackIsOfferedExactlyWhereItHelps(UnavailabilityCause cause) {
		IsolationCapability capability = IsolationCapability.unavailable(cause, "detail", Duration.ofMillis(3));
		FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer().analyze(
				new BeanCreationException("isolatedExecutor", new NetworkIsolationUnavailableException(capability)));
		String fix = (cause == UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE
				|| cause == UnavailabilityCause.MECHANISM_DISABLED) ? "Fix the configuration: " : "Fix the host: ";
		assertThat(analysis.getAction()).startsWith(fix + PropertyFixes.fix(cause))
			.contains("cave.sandbox.fail-fast=false");
		if (cause == UnavailabilityCause.WORK_DIRECTORY_UNUSABLE) {
			assertThat(analysis.getAction() + analysis.getDescription()).doesNotContainIgnoringCase("fallback");
			assertThat(analysis.getDescription()).startsWith("cave-sandbox cannot use its work directory");
		}
		else {
			assertThat(analysis.getAction()).contains("set cave.sandbox.mode=fallback to run commands unisolated");
			assertThat(analysis.getDescription())
				.startsWith("cave-sandbox could not verify OS-level network isolation");
		}
	}

	@Test
	void otherFailuresAreLeftToOtherAnalyzers() {
		assertThat(new NetworkIsolationUnavailableFailureAnalyzer().analyze(new IllegalStateException("x"))).isNull();
	}

}
