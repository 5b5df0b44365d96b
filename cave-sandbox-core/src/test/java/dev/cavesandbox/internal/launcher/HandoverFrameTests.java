package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.InvalidExecutionRequestException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The frame's bytes as launcher.h lays them out; what the launcher makes of them is
 * {@code HandoverTests}'.
 */
class HandoverFrameTests {

	@Test
	void frameIsMagicVersionLengthCountsAndNulTerminatedStrings() throws IOException {
		Map<String, String> environment = new LinkedHashMap<>();
		environment.put("A", "1");
		environment.put("B", "");
		byte[] frame = HandoverFrame.encode(List.of("sh", "-c", ""), environment);
		ByteBuffer buffer = ByteBuffer.wrap(frame).order(ByteOrder.nativeOrder());
		assertThat(new String(frame, 0, 8, StandardCharsets.US_ASCII)).isEqualTo(LauncherContract.HANDOVER_MAGIC);
		assertThat(buffer.getInt(8)).isEqualTo(LauncherContract.HANDOVER_VERSION);
		assertThat(buffer.getInt(12)).isEqualTo(frame.length - 16);
		assertThat(buffer.getInt(16)).isEqualTo(3);
		assertThat(buffer.getInt(20)).isEqualTo(2);
		assertThat(new String(Arrays.copyOfRange(frame, 24, frame.length), StandardCharsets.UTF_8))
			.isEqualTo("sh\0-c\0\0A=1\0B=\0");
	}

	@Test
	void stringsAreEncodedAsProcessBuilderEncodesThem() throws IOException {
		byte[] frame = HandoverFrame.encode(List.of("\u00fc"), Map.of());
		assertThat(Arrays.copyOfRange(frame, 24, frame.length))
			.isEqualTo(("\u00fc\0").getBytes(java.nio.charset.Charset.forName(System.getProperty("sun.jnu.encoding"))));
	}

	@Test
	void nulInAnArgumentIsRefused() {
		assertThatExceptionOfType(InvalidExecutionRequestException.class)
			.isThrownBy(() -> HandoverFrame.encode(List.of("a\0b"), Map.of()))
			.withMessageContaining("NUL");
	}

	@Test
	void variableNameWithAnEqualsSignIsRefused() {
		assertThatExceptionOfType(InvalidExecutionRequestException.class)
			.isThrownBy(() -> HandoverFrame.encode(List.of("true"), Map.of("A=B", "c")))
			.withMessageContaining("'A=B'");
	}

	/**
	 * Many short strings: 300,000 one-byte arguments are 600 KB of strings but 2.4 MB of
	 * pointers, which execve(2) counts too (red team of the warm pool: such an argv was
	 * claimed and ended in the sandbox's execve with 126).
	 */
	@Test
	void stringsWithTheirPointersAboveWhatExecveTakesAreRefusedBeforeAnySpawn() throws IOException {
		List<String> argv = new ArrayList<>(List.of("/bin/true"));
		argv.addAll(Collections.nCopies(300_000, "a"));
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> HandoverFrame.checkArguments(argv))
			.withMessageStartingWith("Cannot run program \"/bin/true\": error=7, Argument list too long (execve(2) "
					+ "would count 3000018 bytes of strings and their pointers");
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> HandoverFrame.encode(argv, Map.of()))
			.withMessageContaining("Argument list too long (execve(2) would count");
		List<String> fits = new ArrayList<>(List.of("/bin/true"));
		fits.addAll(Collections.nCopies(200_000, "a"));
		HandoverFrame.checkArguments(fits);
		assertThat(HandoverFrame.encode(fits, Map.of("A", "1"))).isNotEmpty();
	}

	@Test
	void bodyAboveTheLargestFrameIsRefusedAsTheKernelRefusesIt() {
		List<String> argv = new ArrayList<>(List.of("true"));
		while ((argv.size() - 1) * 100_001L <= LauncherContract.HANDOVER_MAX) {
			argv.add("x".repeat(100_000));
		}
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> HandoverFrame.encode(argv, Map.of()))
			.withMessageStartingWith("Cannot run program \"true\": error=7, Argument list too long")
			.withMessageContaining("more than the " + LauncherContract.HANDOVER_MAX);
	}

	@Test
	void stringLongerThanTheKernelTakesIsRefused() throws IOException {
		assertThat(HandoverFrame.encode(List.of("true", "x".repeat(HandoverFrame.MAX_STRING - 1)), Map.of()))
			.hasSize(16 + 8 + 5 + HandoverFrame.MAX_STRING);
		assertThatExceptionOfType(IOException.class)
			.isThrownBy(() -> HandoverFrame.encode(List.of("true"), Map.of("A", "x".repeat(HandoverFrame.MAX_STRING))))
			.withMessageContaining("MAX_ARG_STRLEN");
	}

}
