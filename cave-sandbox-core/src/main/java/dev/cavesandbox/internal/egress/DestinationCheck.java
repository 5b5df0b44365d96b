package dev.cavesandbox.internal.egress;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import org.jspecify.annotations.Nullable;

/**
 * What an {@link EgressProxy} checks of a target before anything is sent anywhere, in
 * this order: the host and port against the {@link EgressAllowList} (the host as the
 * client named it); the name's addresses, resolved once by the policy's
 * {@link HostResolver} (IP literals are parsed, not resolved); unless private
 * destinations are allowed, that no address is refused by {@link DestinationAddresses}
 * (one refused address refuses them all: a name that answers both a public and a private
 * address is refused). The proxy then connects to the addresses checked here, in order,
 * never resolving the name again.
 */
final class DestinationCheck {

	private DestinationCheck() {
	}

	/**
	 * Check a target against a policy.
	 * @param target the target
	 * @param policy the policy
	 * @return the addresses to connect to, in order; never empty
	 * @throws Refusal {@code 403} {@link EgressDecision#NOT_ALLOWED} or
	 * {@link EgressDecision#PRIVATE_DESTINATION}, {@code 502}
	 * {@link EgressDecision#UNRESOLVED}
	 */
	static List<InetAddress> addresses(RequestTarget target, EgressPolicy policy) throws Refusal {
		if (!policy.allowList().allows(target.host(), target.port())) {
			throw Refusal.forbidden(EgressDecision.NOT_ALLOWED, target,
					target.display() + " is not in the allowed hosts (allowedHosts)");
		}
		List<InetAddress> addresses;
		try {
			addresses = resolve(target, policy.resolver());
		}
		catch (UnknownHostException | RuntimeException ex) {
			throw Refusal.badGateway(EgressDecision.UNRESOLVED, target, target.host() + " does not resolve");
		}
		InetAddress refused = policy.allowPrivateDestinations() ? null : DestinationAddresses.firstRefused(addresses);
		if (refused != null) {
			throw Refusal.forbidden(EgressDecision.PRIVATE_DESTINATION, target,
					target.display() + " resolves to " + refused.getHostAddress() + ", "
							+ DestinationAddresses.refusal(refused)
							+ "; refused unless private destinations are allowed (allowPrivateDestinations)");
		}
		return addresses;
	}

	/**
	 * The addresses to check and connect to: an IP literal is parsed, a name resolved
	 * once.
	 */
	private static List<InetAddress> resolve(RequestTarget target, HostResolver resolver) throws UnknownHostException {
		if (target.ipv6()) {
			// A bracketed literal is parsed, never looked up.
			return List.of(InetAddress.getByName("[" + target.host() + "]"));
		}
		byte[] ipv4 = ipv4Literal(target.host());
		if (ipv4 != null) {
			return List.of(Inet4Address.getByAddress(ipv4));
		}
		List<InetAddress> addresses = resolver.resolve(target.host());
		if (addresses == null || addresses.isEmpty()) {
			throw new UnknownHostException(target.host());
		}
		return List.copyOf(addresses);
	}

	private static byte @Nullable [] ipv4Literal(String host) {
		String[] parts = host.split("\\.", -1);
		if (parts.length != 4) {
			return null;
		}
		byte[] bytes = new byte[4];
		for (int i = 0; i < 4; i++) {
			String part = parts[i];
			if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch((c) -> c >= '0' && c <= '9')) {
				return null;
			}
			int value = Integer.parseInt(part);
			if (value > 255) {
				return null;
			}
			bytes[i] = (byte) value;
		}
		return bytes;
	}

}
