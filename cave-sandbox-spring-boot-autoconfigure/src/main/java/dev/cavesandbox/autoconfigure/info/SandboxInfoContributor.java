package dev.cavesandbox.autoconfigure.info;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.cavesandbox.autoconfigure.SandboxFacts;

import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * Contributes the facts of the {@code sandbox} health indicator to
 * {@code /actuator/info}, under the key {@code sandbox}: a {@code state}
 * ({@code isolated}, {@code unisolated}, {@code unavailable} or {@code unverified})
 * followed by the same details.
 */
public final class SandboxInfoContributor implements InfoContributor {

	private final SandboxFacts facts;

	SandboxInfoContributor(SandboxFacts facts) {
		this.facts = facts;
	}

	@Override
	public void contribute(Info.Builder builder) {
		SandboxFacts.Snapshot snapshot = this.facts.read();
		Map<String, Object> sandbox = new LinkedHashMap<>();
		sandbox.put("state", snapshot.state().name().toLowerCase(Locale.ROOT));
		sandbox.putAll(snapshot.details());
		builder.withDetail("sandbox", sandbox);
	}

}
