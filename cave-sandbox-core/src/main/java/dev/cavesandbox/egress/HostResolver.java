package dev.cavesandbox.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

import dev.cavesandbox.internal.egress.EgressProxy;

/**
 * Resolves the host names that clients of an {@link EgressProxy} ask for. The proxy calls
 * it once per connection and connects only to the addresses it returned, after checking
 * them. IP literals are parsed by the proxy itself and never reach a resolver.
 */
@FunctionalInterface
public interface HostResolver {

	/** The JVM's resolver ({@link InetAddress#getAllByName(String)}). */
	HostResolver SYSTEM = (host) -> List.of(InetAddress.getAllByName(host));

	/**
	 * The addresses of a host name, in the order to try them.
	 * @param host the name, lower case, without a trailing dot
	 * @return the addresses, never empty
	 * @throws UnknownHostException if the name does not resolve
	 */
	List<InetAddress> resolve(String host) throws UnknownHostException;

}
