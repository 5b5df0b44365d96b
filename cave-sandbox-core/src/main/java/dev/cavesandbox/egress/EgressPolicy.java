package dev.cavesandbox.egress;

import java.util.Objects;

import dev.cavesandbox.internal.egress.DestinationAddresses;
import dev.cavesandbox.internal.egress.EgressProxy;

/**
 * What an {@link EgressProxy} lets through.
 *
 * @param allowList the hosts and ports a client may ask for
 * @param allowPrivateDestinations whether names may resolve to addresses that
 * {@link DestinationAddresses} refuses (loopback, private, link-local ...); {@code false}
 * protects against SSRF
 * @param resolver how names are resolved
 */
public record EgressPolicy(EgressAllowList allowList, boolean allowPrivateDestinations, HostResolver resolver) {

	public EgressPolicy {
		Objects.requireNonNull(allowList, "allowList");
		Objects.requireNonNull(resolver, "resolver");
	}

}
