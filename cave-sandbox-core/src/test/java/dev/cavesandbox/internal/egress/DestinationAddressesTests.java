package dev.cavesandbox.internal.egress;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which destination addresses the egress proxy refuses, and why. Classification only:
 * every address here is an IP literal, parsed, never resolved or connected to.
 */
class DestinationAddressesTests {

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			0.0.0.0            | unspecified / this network (RFC 1122)
			0.255.255.255      | unspecified / this network (RFC 1122)
			10.0.0.1           | private (RFC 1918)
			10.255.255.255     | private (RFC 1918)
			100.64.0.0         | shared address space, CGNAT (RFC 6598
			100.100.100.200    | shared address space, CGNAT (RFC 6598
			100.127.255.255    | shared address space, CGNAT (RFC 6598
			127.0.0.1          | loopback (RFC 1122)
			127.255.255.254    | loopback (RFC 1122)
			169.254.169.254    | link-local (RFC 3927
			169.254.0.1        | link-local (RFC 3927
			172.16.0.0         | private (RFC 1918)
			172.31.255.255     | private (RFC 1918)
			192.0.0.8          | IETF protocol assignments (RFC 6890)
			192.0.2.1          | documentation, TEST-NET-1 (RFC 5737)
			192.168.1.1        | private (RFC 1918)
			198.18.0.1         | benchmarking (RFC 2544)
			198.19.255.255     | benchmarking (RFC 2544)
			198.51.100.7       | documentation, TEST-NET-2 (RFC 5737)
			203.0.113.9        | documentation, TEST-NET-3 (RFC 5737)
			224.0.0.1          | multicast (RFC 5771)
			239.255.255.255    | multicast (RFC 5771)
			240.0.0.1          | reserved (RFC 1112)
			255.255.255.254    | reserved (RFC 1112)
			255.255.255.255    | limited broadcast (RFC 919)
			::                 | unspecified (RFC 4291)
			::1                | loopback (RFC 4291)
			fc00::1            | unique local (RFC 4193
			fd00:ec2::254      | unique local (RFC 4193
			fe80::1            | link-local (RFC 4291)
			febf:ffff::1       | link-local (RFC 4291)
			fec0::1            | site-local, deprecated (RFC 3879)
			ff02::1            | multicast (RFC 4291)
			2001:db8::1        | documentation (RFC 3849)
			100::1             | discard-only (RFC 6666)
			""")
	void nonGlobalAddressIsRefusedWithItsReason(String address, String reason) throws UnknownHostException {
		assertThat(DestinationAddresses.refusal(literal(address))).startsWith(reason);
	}

	@ParameterizedTest
	@ValueSource(strings = { "1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
			"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
			"192.0.1.255", "192.0.3.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
			"198.51.99.255", "203.0.114.0", "223.255.255.255", "2606:4700:4700::1111", "2001:4860:4860::8888",
			"2001:db9::1", "fbff:ffff::1", "100:0:0:1::1", "::2:1:1:1:1" })
	void globalAddressIsNotRefused(String address) throws UnknownHostException {
		assertThat(DestinationAddresses.refusal(literal(address))).isNull();
	}

	@Test
	void boundariesOfThePrivate172BlockAreExact() throws UnknownHostException {
		assertThat(DestinationAddresses.refusal(literal("172.15.255.255"))).isNull();
		assertThat(DestinationAddresses.refusal(literal("172.16.0.0"))).isEqualTo("private (RFC 1918)");
		assertThat(DestinationAddresses.refusal(literal("172.31.255.255"))).isEqualTo("private (RFC 1918)");
		assertThat(DestinationAddresses.refusal(literal("172.32.0.0"))).isNull();
	}

	@Test
	void ipv4MappedAddressIsJudgedByItsIpv4Address() throws UnknownHostException {
		assertThat(DestinationAddresses.refusal(ipv6("::ffff:127.0.0.1")))
			.isEqualTo("loopback (RFC 1122) in IPv4-mapped (RFC 4291)");
		assertThat(DestinationAddresses.refusal(ipv6("::ffff:169.254.169.254"))).startsWith("link-local (RFC 3927")
			.endsWith("in IPv4-mapped (RFC 4291)");
		assertThat(DestinationAddresses.refusal(ipv6("::ffff:1.1.1.1"))).isNull();
		// Java turns a mapped literal into an IPv4 address: judged the same.
		assertThat(DestinationAddresses.refusal(literal("::ffff:10.0.0.1"))).isEqualTo("private (RFC 1918)");
	}

	@Test
	void ipv4CompatibleAddressIsJudgedByItsIpv4Address() throws UnknownHostException {
		assertThat(DestinationAddresses.refusal(ipv6("::10.0.0.1")))
			.isEqualTo("private (RFC 1918) in IPv4-compatible (RFC 4291)");
		assertThat(DestinationAddresses.refusal(ipv6("::1.1.1.1"))).isNull();
	}

	@Test
	void nat64AddressIsJudgedByItsIpv4Address() throws UnknownHostException {
		assertThat(DestinationAddresses.refusal(ipv6("64:ff9b::169.254.169.254"))).startsWith("link-local")
			.endsWith("in NAT64 (RFC 6052)");
		assertThat(DestinationAddresses.refusal(ipv6("64:ff9b::7f00:1"))).startsWith("loopback");
		assertThat(DestinationAddresses.refusal(ipv6("64:ff9b::1.1.1.1"))).isNull();
	}

	@Test
	void sixToFourAddressIsJudgedByItsIpv4Address() throws UnknownHostException {
		// 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
		assertThat(DestinationAddresses.refusal(ipv6("2002:a9fe:a9fe::1"))).startsWith("link-local (RFC 3927")
			.endsWith("in 6to4 (RFC 3056)");
		assertThat(DestinationAddresses.refusal(ipv6("2002:c0a8:0101::1")))
			.isEqualTo("private (RFC 1918) in 6to4 (RFC 3056)");
		assertThat(DestinationAddresses.refusal(ipv6("2002:0101:0101::1"))).isNull();
	}

	@Test
	void oneRefusedAddressRefusesTheWholeAnswerInAnyOrder() throws UnknownHostException {
		InetAddress global = literal("1.1.1.1");
		InetAddress loopback = literal("127.0.0.1");
		InetAddress metadata = literal("169.254.169.254");
		assertThat(DestinationAddresses.firstRefused(List.of(global, loopback))).isEqualTo(loopback);
		assertThat(DestinationAddresses.firstRefused(List.of(loopback, global))).isEqualTo(loopback);
		assertThat(DestinationAddresses.firstRefused(List.of(global, metadata, loopback))).isEqualTo(metadata);
		assertThat(DestinationAddresses.firstRefused(List.of(global, literal("8.8.8.8")))).isNull();
	}

	private static InetAddress literal(String address) throws UnknownHostException {
		// A literal is parsed, never resolved: brackets make Java insist on an IPv6
		// literal.
		return InetAddress.getByName(address.contains(":") ? "[" + address + "]" : address);
	}

	/**
	 * An IPv6 address kept as such (Java would turn an IPv4-mapped literal into IPv4).
	 */
	private static InetAddress ipv6(String address) throws UnknownHostException {
		byte[] bytes = literal(address).getAddress();
		if (bytes.length == 4) {
			byte[] mapped = new byte[16];
			mapped[10] = (byte) 0xff;
			mapped[11] = (byte) 0xff;
			System.arraycopy(bytes, 0, mapped, 12, 4);
			bytes = mapped;
		}
		InetAddress address6 = Inet6Address.getByAddress(null, bytes, -1);
		assertThat(address6).isInstanceOf(Inet6Address.class);
		return address6;
	}

}
