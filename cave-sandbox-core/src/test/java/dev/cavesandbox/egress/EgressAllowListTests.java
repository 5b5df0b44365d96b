package dev.cavesandbox.egress;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The allow-list of the egress proxy: the entries it accepts, how it normalizes them and
 * which hosts and ports they allow.
 */
class EgressAllowListTests {

	@Test
	void noneIsEmptyAndAllowsNothing() {
		assertThat(EgressAllowList.NONE.isEmpty()).isTrue();
		assertThat(EgressAllowList.NONE.entries()).isEmpty();
		assertThat(EgressAllowList.NONE.allows("example.org", 443)).isFalse();
		assertThat(EgressAllowList.of(List.of())).isSameAs(EgressAllowList.NONE);
	}

	@Test
	void entriesAreNormalizedAndKeptInOrder() {
		EgressAllowList list = EgressAllowList
			.of(List.of("PyPI.org", "*.Example.ORG.:8443", "files.pythonhosted.org.", "[::1]:8080", "10.0.0.1:0080"));
		assertThat(list.isEmpty()).isFalse();
		assertThat(list.entries()).containsExactly("pypi.org", "*.example.org:8443", "files.pythonhosted.org",
				"[::1]:8080", "10.0.0.1:80");
	}

	@Test
	void hostAllowsPorts80And443Only() {
		EgressAllowList list = EgressAllowList.of(List.of("pypi.org"));
		assertThat(list.allows("pypi.org", 443)).isTrue();
		assertThat(list.allows("pypi.org", 80)).isTrue();
		assertThat(list.allows("pypi.org", 8080)).isFalse();
		assertThat(list.allows("pypi.org", 22)).isFalse();
	}

	@Test
	void hostWithPortAllowsThatPortOnly() {
		EgressAllowList list = EgressAllowList.of(List.of("localhost:8080"));
		assertThat(list.allows("localhost", 8080)).isTrue();
		assertThat(list.allows("localhost", 80)).isFalse();
		assertThat(list.allows("localhost", 443)).isFalse();
		assertThat(list.allows("localhost", 8081)).isFalse();
	}

	@Test
	void hostIsComparedCaseInsensitivelyWithoutTrailingDot() {
		EgressAllowList list = EgressAllowList.of(List.of("pypi.org"));
		assertThat(list.allows("PYPI.org", 443)).isTrue();
		assertThat(list.allows("pypi.org.", 443)).isTrue();
		assertThat(list.allows("www.pypi.org", 443)).isFalse();
		assertThat(list.allows("pypi.org.evil.example", 443)).isFalse();
		assertThat(list.allows("evilpypi.org", 443)).isFalse();
	}

	@Test
	void wildcardAllowsSubdomainsButNotTheDomainItself() {
		EgressAllowList list = EgressAllowList.of(List.of("*.example.org"));
		assertThat(list.allows("api.example.org", 443)).isTrue();
		assertThat(list.allows("a.b.example.org", 80)).isTrue();
		assertThat(list.allows("example.org", 443)).isFalse();
		assertThat(list.allows("badexample.org", 443)).isFalse();
		assertThat(list.allows(".example.org", 443)).isFalse();
		assertThat(list.allows("api.example.org", 8443)).isFalse();
	}

	@Test
	void wildcardWithPortAllowsThatPortOnly() {
		EgressAllowList list = EgressAllowList.of(List.of("*.example.org:8443"));
		assertThat(list.allows("api.example.org", 8443)).isTrue();
		assertThat(list.allows("api.example.org", 443)).isFalse();
	}

	@Test
	void topLevelWildcardIsAccepted() {
		EgressAllowList list = EgressAllowList.of(List.of("*.com"));
		assertThat(list.allows("example.com", 443)).isTrue();
		assertThat(list.allows("com", 443)).isFalse();
	}

	@Test
	void ipLiteralsMatchAsWritten() {
		EgressAllowList list = EgressAllowList.of(List.of("127.0.0.1:8080", "[::1]:8080"));
		assertThat(list.allows("127.0.0.1", 8080)).isTrue();
		assertThat(list.allows("::1", 8080)).isTrue();
		assertThat(list.allows("[::1]", 8080)).isTrue();
		assertThat(list.allows("localhost", 8080)).isFalse();
		assertThat(list.allows("0:0:0:0:0:0:0:1", 8080)).isFalse();
	}

	@Test
	void matchingEntryIsTheFirstEntryThatAllows() {
		EgressAllowList list = EgressAllowList.of(List.of("api.example.org:8443", "*.example.org", "pypi.org"));
		assertThat(list.matchingEntry("API.example.org", 443)).isEqualTo("*.example.org");
		assertThat(list.matchingEntry("api.example.org", 8443)).isEqualTo("api.example.org:8443");
		assertThat(list.matchingEntry("pypi.org", 80)).isEqualTo("pypi.org");
		assertThat(list.matchingEntry("pypi.org", 8080)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "pypi .org", " pypi.org", "http://pypi.org", "https://pypi.org:443", "pypi.org/simple",
			"user@pypi.org", "*", "*.", "a.*.b", "*.*.org", "pypi*.org", "pypi.org:0", "pypi.org:65536", "pypi.org:",
			"pypi.org:http", "pypi.org:-1", "::1", "fe80::1:443", "[::1", "[::1]x", "[]:80", "[example.org]:80",
			"pypi..org", ".pypi.org", "bücher.example", "pypi.org:443:1", "pypi!.org" })
	void invalidEntryIsRejectedWithItsNameAndTheAcceptedForms(String entry) {
		assertThatIllegalArgumentException().isThrownBy(() -> EgressAllowList.of(List.of("pypi.org", entry)))
			.withMessageContaining("'" + entry + "'")
			.withMessageContaining("accepted forms: host, host:port, *.domain, *.domain:port");
	}

	@Test
	void errorsSayWhatIsWrong() {
		assertThatIllegalArgumentException().isThrownBy(() -> EgressAllowList.of(List.of("bücher.example")))
			.withMessageContaining("not ASCII");
		assertThatIllegalArgumentException().isThrownBy(() -> EgressAllowList.of(List.of("http://x")))
			.withMessageContaining("scheme");
		assertThatIllegalArgumentException().isThrownBy(() -> EgressAllowList.of(List.of("fe80::1")))
			.withMessageContaining("brackets");
		assertThatIllegalArgumentException().isThrownBy(() -> EgressAllowList.of(List.of("x:70000")))
			.withMessageContaining("1 to 65535");
		assertThatIllegalArgumentException().isThrownBy(() -> EgressAllowList.of(List.of("a.*.b")))
			.withMessageContaining("*.domain");
	}

	@Test
	void nullEntryIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EgressAllowList.of(java.util.Arrays.asList("pypi.org", null)))
			.withMessageContaining("empty");
	}

	@Test
	void listsWithTheSameEntriesAreEqual() {
		assertThat(EgressAllowList.of(List.of("PyPI.org"))).isEqualTo(EgressAllowList.of(List.of("pypi.org.")))
			.hasSameHashCodeAs(EgressAllowList.of(List.of("pypi.org")))
			.hasToString("[pypi.org]");
	}

}
