package dev.cavesandbox.internal.process;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's ready marker, read ahead or dropped from the front of stdout.
 */
class ReadyMarkerTests {

	@Test
	void awaitReadsExactlyTheMarker() throws IOException {
		InputStream stdout = stream("CAVE-RDYoutput");
		assertThat(ReadyMarker.await(stdout)).isTrue();
		assertThat(text(stdout)).isEqualTo("output");
	}

	@Test
	void awaitAtAnEarlyEndOrOtherBytesIsFalse() throws IOException {
		assertThat(ReadyMarker.await(stream("CAVE"))).isFalse();
		assertThat(ReadyMarker.await(stream("CAVE-RDZ"))).isFalse();
	}

	@Test
	void droppedTakesTheMarkerOffTheFront() throws IOException {
		assertThat(text(ReadyMarker.dropped(stream("CAVE-RDYhello CAVE-RDY")))).isEqualTo("hello CAVE-RDY");
	}

	@Test
	void droppedKeepsWhatIsNotTheMarker() throws IOException {
		assertThat(text(ReadyMarker.dropped(stream("")))).isEmpty();
		assertThat(text(ReadyMarker.dropped(stream("CAVE")))).isEqualTo("CAVE");
		assertThat(text(ReadyMarker.dropped(stream("something else")))).isEqualTo("something else");
	}

	@Test
	void droppedGivesSingleBytesToo() throws IOException {
		InputStream stream = ReadyMarker.dropped(stream("CAVE-RDYab"));
		assertThat(stream.read()).isEqualTo('a');
		assertThat(stream.read()).isEqualTo('b');
		assertThat(stream.read()).isEqualTo(-1);
	}

	private static InputStream stream(String text) {
		return new ByteArrayInputStream(text.getBytes(StandardCharsets.US_ASCII));
	}

	private static String text(InputStream stream) throws IOException {
		return new String(stream.readAllBytes(), StandardCharsets.US_ASCII);
	}

}
