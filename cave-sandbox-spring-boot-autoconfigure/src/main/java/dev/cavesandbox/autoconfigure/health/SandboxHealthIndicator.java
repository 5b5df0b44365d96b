package dev.cavesandbox.autoconfigure.health;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.SandboxFacts;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code sandbox} health indicator: whether the network boundary holds on this
 * instance.
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
 * Details: {@code mode}, {@code isolated}, {@code mechanism}, {@code error} (when
 * refused) and {@code probe} (its verdict: what it verified, or the cause, its
 * description, the fix and what the wrapper reported; and how long it took). Spring Boot
 * 4 ({@code spring-boot-health}); on Spring Boot 3.5 {@code SandboxBoot3HealthIndicator}
 * reports the same.
 */
public final class SandboxHealthIndicator implements HealthIndicator {

	/**
	 * Commands run WITHOUT network isolation ({@code cave.sandbox.mode=fallback} on a
	 * host that cannot isolate). It ranks between {@code OUT_OF_SERVICE} and {@code UP}
	 * in the aggregate status, and maps to HTTP 200 unless
	 * {@code management.endpoint.health.status.http-mapping} says otherwise.
	 */
	public static final Status UNISOLATED = new Status(SandboxHealthStatus.UNISOLATED_CODE,
			SandboxHealthStatus.UNISOLATED_DESCRIPTION);

	private final SandboxFacts facts;

	SandboxHealthIndicator(SandboxFacts facts) {
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
