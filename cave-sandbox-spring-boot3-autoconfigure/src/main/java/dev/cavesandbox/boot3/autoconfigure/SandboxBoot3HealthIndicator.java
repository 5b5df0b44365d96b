package dev.cavesandbox.boot3.autoconfigure;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.SandboxFacts;
import dev.cavesandbox.autoconfigure.health.SandboxHealthStatus;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The {@code sandbox} health indicator on Spring Boot 3.5: whether the network boundary
 * holds on this instance. The same statuses and details as the Spring Boot 4 indicator
 * ({@code SandboxHealthIndicator}), in {@code spring-boot-actuator}'s health types:
 * <ul>
 * <li>{@link Status#UP UP}: the probe verified isolation and the {@link IsolatedExecutor}
 * applies it;</li>
 * <li>{@link #UNISOLATED}: fallback mode on a host without isolation; commands run and
 * CAN reach the network;</li>
 * <li>{@link Status#DOWN DOWN}: strict mode on a host without isolation; every execution
 * is refused;</li>
 * <li>{@link Status#UNKNOWN UNKNOWN}: the application's own executor claims an isolation
 * that the probe did not verify.</li>
 * </ul>
 */
public final class SandboxBoot3HealthIndicator implements HealthIndicator {

	/**
	 * Commands run WITHOUT network isolation ({@code cave.sandbox.mode=fallback} on a
	 * host that cannot isolate); ranked between {@code OUT_OF_SERVICE} and {@code UP} in
	 * the aggregate status.
	 */
	public static final Status UNISOLATED = new Status(SandboxHealthStatus.UNISOLATED_CODE,
			SandboxHealthStatus.UNISOLATED_DESCRIPTION);

	private final SandboxFacts facts;

	SandboxBoot3HealthIndicator(SandboxFacts facts) {
		this.facts = facts;
	}

	@Override
	public Health health() {
		SandboxFacts.Snapshot snapshot = this.facts.read();
		return Health.status(status(snapshot.state())).withDetails(snapshot.details()).build();
	}

	private static Status status(SandboxFacts.State state) {
		return switch (state) {
			case ISOLATED -> Status.UP;
			case UNISOLATED -> UNISOLATED;
			case UNAVAILABLE -> Status.DOWN;
			case UNVERIFIED -> Status.UNKNOWN;
		};
	}

}
