package dev.cavesandbox.compat;

import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an application on any supported Spring Boot line gets in fallback mode on a host made
 * unable to isolate, in types both lines share: an unisolated execution that says so, and the info
 * and gauge that report it. A subclass per line sets the properties (fallback mode, unshare as the
 * only mechanism at a path that does not exist, {@code management.info.sandbox.enabled=true}) and
 * adds the line's own health types.
 */
abstract class FallbackApplicationChecks {

	@Autowired
	private IsolatedExecutor executor;

	@Autowired
	@Qualifier("sandboxInfoContributor")
	private InfoContributor sandboxInfoContributor;

	@Autowired
	private MeterRegistry meterRegistry;

	@Test
	void executionRunsUnisolatedAndSaysSo() {
		ExecutionResult result = this.executor.execute("id", "-u");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.isolation().networkIsolated()).isFalse();
		assertThat(result.isolation().mechanism()).isEqualTo("none");
	}

	@Test
	void infoAndGaugeReportUnisolated() {
		Info.Builder info = new Info.Builder();
		this.sandboxInfoContributor.contribute(info);
		assertThat(info.build().get("sandbox")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("state", "unisolated");
		assertThat(this.meterRegistry.get("cave.sandbox.unisolated").gauge().value()).isOne();
	}

}
