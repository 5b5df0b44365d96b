package dev.cavesandbox.internal.egress;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;

import dev.cavesandbox.egress.EgressPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The destination addresses an {@link EgressProxy} refuses unless
 * {@link EgressPolicy#allowPrivateDestinations()}: every address that is not a global
 * unicast address (loopback, private, link-local with the cloud metadata services, shared
 * CGNAT space, multicast, reserved, documentation ...). An IPv6 address that embeds an
 * IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 and 6to4) is judged by the IPv4
 * address it carries. The tables below are the whole policy, one row per block with the
 * RFC that sets it aside; this class only classifies, it never resolves or connects.
 */
public final class DestinationAddresses {

	private static final List<Block> IPV4 = List.of(
			// More specific rows first: the first row that contains the address
			// gives the reason.
			refused("0.0.0.0/8", "unspecified / this network (RFC 1122)"), refused("10.0.0.0/8", "private (RFC 1918)"),
			refused("100.64.0.0/10",
					"shared address space, CGNAT (RFC 6598; 100.100.100.200 is a cloud metadata service)"),
			refused("127.0.0.0/8", "loopback (RFC 1122)"),
			refused("169.254.0.0/16", "link-local (RFC 3927; 169.254.169.254 is the cloud metadata service)"),
			refused("172.16.0.0/12", "private (RFC 1918)"),
			refused("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
			refused("192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)"),
			refused("192.168.0.0/16", "private (RFC 1918)"), refused("198.18.0.0/15", "benchmarking (RFC 2544)"),
			refused("198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)"),
			refused("203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)"),
			refused("224.0.0.0/4", "multicast (RFC 5771)"),
			refused("255.255.255.255/32", "limited broadcast (RFC 919)"),
			refused("240.0.0.0/4", "reserved (RFC 1112)"));

	private static final List<Block> IPV6 = List.of(
			// More specific rows first: :: and ::1 lie within the IPv4-compatible ::/96.
			refused("::/128", "unspecified (RFC 4291)"), refused("::1/128", "loopback (RFC 4291)"),
			embedding("::ffff:0:0/96", 12, "IPv4-mapped (RFC 4291)"),
			embedding("::/96", 12, "IPv4-compatible (RFC 4291)"), embedding("64:ff9b::/96", 12, "NAT64 (RFC 6052)"),
			refused("100::/64", "discard-only (RFC 6666)"), refused("2001:db8::/32", "documentation (RFC 3849)"),
			embedding("2002::/16", 2, "6to4 (RFC 3056)"),
			refused("fc00::/7", "unique local (RFC 4193; fd00:ec2::254 is the AWS metadata service)"),
			refused("fe80::/10", "link-local (RFC 4291)"), refused("fec0::/10", "site-local, deprecated (RFC 3879)"),
			refused("ff00::/8", "multicast (RFC 4291)"));

	private DestinationAddresses() {
	}

	/**
	 * Why an address is refused as a destination.
	 * @param address the address
	 * @return a short reason such as {@code loopback (RFC 1122)}, or {@code null} when
	 * the address is global
	 */
	public static @Nullable String refusal(InetAddress address) {
		byte[] bytes = address.getAddress();
		return (bytes.length == 4) ? refusal(IPV4, bytes) : refusal(IPV6, bytes);
	}

	/**
	 * The first refused address of a name's answer: one refused address refuses the whole
	 * answer (a name that answers a public and a private address is refused, whatever
	 * their order).
	 * @param addresses the addresses
	 * @return the first refused address, or {@code null} when all are global
	 */
	static @Nullable InetAddress firstRefused(List<InetAddress> addresses) {
		for (InetAddress address : addresses) {
			if (refusal(address) != null) {
				return address;
			}
		}
		return null;
	}

	private static @Nullable String refusal(List<Block> table, byte[] address) {
		for (Block block : table) {
			if (block.contains(address)) {
				if (block.embeddedAt() < 0) {
					return block.reason();
				}
				byte[] ipv4 = Arrays.copyOfRange(address, block.embeddedAt(), block.embeddedAt() + 4);
				String refusal = refusal(IPV4, ipv4);
				return (refusal != null) ? refusal + " in " + block.reason() : null;
			}
		}
		return null;
	}

	private static Block refused(String cidr, String reason) {
		return block(cidr, -1, reason);
	}

	private static Block embedding(String cidr, int embeddedAt, String reason) {
		return block(cidr, embeddedAt, reason);
	}

	private static Block block(String cidr, int embeddedAt, String reason) {
		int slash = cidr.indexOf('/');
		String literal = cidr.substring(0, slash);
		byte[] network = literalBytes(literal);
		return new Block(network, Integer.parseInt(cidr.substring(slash + 1)), embeddedAt, reason);
	}

	/**
	 * The bytes of an IP literal of the tables (parsing a literal never resolves
	 * anything). Java turns an IPv4-mapped literal into an IPv4 address; its IPv6 form is
	 * rebuilt.
	 */
	private static byte[] literalBytes(String literal) {
		try {
			InetAddress address = InetAddress.getByName(literal.contains(":") ? "[" + literal + "]" : literal);
			byte[] bytes = address.getAddress();
			if (literal.contains(":") && address instanceof Inet4Address) {
				byte[] mapped = new byte[16];
				mapped[10] = (byte) 0xff;
				mapped[11] = (byte) 0xff;
				System.arraycopy(bytes, 0, mapped, 12, 4);
				return mapped;
			}
			return bytes;
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("Not an IP literal: " + literal, ex);
		}
	}

	/**
	 * One block of addresses.
	 *
	 * @param network the first address
	 * @param prefixLength the length of the prefix in bits
	 * @param embeddedAt where the embedded IPv4 address starts, or {@code -1} when the
	 * block is refused as a whole
	 * @param reason why it is refused, or what embeds the IPv4 address
	 */
	private record Block(byte[] network, int prefixLength, int embeddedAt, String reason) {

		boolean contains(byte[] address) {
			if (address.length != this.network.length) {
				return false;
			}
			int fullBytes = this.prefixLength / 8;
			for (int i = 0; i < fullBytes; i++) {
				if (address[i] != this.network[i]) {
					return false;
				}
			}
			int remainingBits = this.prefixLength % 8;
			if (remainingBits == 0) {
				return true;
			}
			int mask = (0xff << (8 - remainingBits)) & 0xff;
			return (address[fullBytes] & mask) == (this.network[fullBytes] & mask);
		}

	}

}
