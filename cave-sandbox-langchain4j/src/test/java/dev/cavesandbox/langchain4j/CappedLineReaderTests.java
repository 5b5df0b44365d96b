package dev.cavesandbox.langchain4j;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.cavesandbox.langchain4j.CappedLineReader.Line;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link CappedLineReader}.
 */
class CappedLineReaderTests {

	private static List<Line> lines(InputStream input, int cap, int shown) throws IOException {
		List<Line> lines = new ArrayList<>();
		try (CappedLineReader reader = new CappedLineReader(input, cap, shown)) {
			for (Line line = reader.next(); line != null; line = reader.next()) {
				lines.add(line);
			}
		}
		return lines;
	}

	private static InputStream text(String text) {
		return new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void linesEndAtALineBreakAndTheLastAtTheEndOfTheStream() throws IOException {
		assertThat(lines(text("one\r\n\ntwo\nthree"), 10, 3)).containsExactly(new Line("one", false),
				new Line("", false), new Line("two", false), new Line("three", false));
	}

	@Test
	void aStreamThatEndsWithALineBreakHasNoEmptyLastLine() throws IOException {
		assertThat(lines(text("one\n"), 10, 3)).containsExactly(new Line("one", false));
		assertThat(lines(text(""), 10, 3)).isEmpty();
	}

	@Test
	void aLineOfExactlyTheCapIsWhole() throws IOException {
		assertThat(lines(text("12345\n12345"), 5, 2)).containsExactly(new Line("12345", false),
				new Line("12345", false));
	}

	@Test
	void aLinePastTheCapIsCutToItsShownBytesAndItsRestSkipped() throws IOException {
		assertThat(lines(text("123456789\nnext\n12345678"), 5, 3)).containsExactly(new Line("123", true),
				new Line("next", false), new Line("123", true));
	}

	@Test
	void aLineLongerThanTheBufferIsReadWhole() throws IOException {
		String line = "x".repeat(CappedLineReader.BUFFER_SIZE * 3 + 7);
		assertThat(lines(new TrickleInputStream(text(line + "\nend")), line.length(), 10))
			.containsExactly(new Line(line, false), new Line("end", false));
	}

	@Test
	void aCutDropsACharacterItSplitsInTwo() throws IOException {
		// "é" is two bytes in UTF-8, "€" three: a cut after 2 bytes of "a€" keeps "a".
		assertThat(lines(text("a€bcdef\néé"), 4, 2)).containsExactly(new Line("a", true), new Line("éé", false));
		assertThat(lines(text("aé€€€"), 4, 3)).containsExactly(new Line("aé", true));
	}

	@Test
	void aLinePastTheCapIsReturnedBeforeItsEnd() throws IOException {
		EndlessInputStream endless = new EndlessInputStream();
		try (CappedLineReader reader = new CappedLineReader(endless, 100_000, 4)) {
			assertThat(reader.next()).isEqualTo(new Line("aaaa", true));
		}
		assertThat(endless.read).isLessThanOrEqualTo(100_000 + CappedLineReader.BUFFER_SIZE);
	}

	@Test
	void aLongLineCostsAtMostTheCap() throws IOException {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		InputStream input = new SequenceInputStream(new EndlessInputStream(64L * 1024 * 1024), text("\nnext\n"));
		List<Line> lines = new ArrayList<>();
		long before = threads.getCurrentThreadAllocatedBytes();
		try (CappedLineReader reader = new CappedLineReader(input, 1024 * 1024, 10)) {
			lines.add(reader.next());
			lines.add(reader.next());
		}
		long allocated = threads.getCurrentThreadAllocatedBytes() - before;
		assertThat(lines).containsExactly(new Line("aaaaaaaaaa", true), new Line("next", false));
		assertThat(allocated).isLessThan(2L * 1024 * 1024);
	}

	@Test
	void prefixCutsTextToItsFirstCharacters() {
		assertThat(CappedLineReader.prefix("abc", 3)).isEqualTo("abc");
		assertThat(CappedLineReader.prefix("abcd", 3)).isEqualTo("abc...");
		assertThat(CappedLineReader.prefix("ab\uD83D\uDE00", 3)).isEqualTo("ab...");
	}

	@Test
	void shownMustNotExceedTheCap() {
		assertThatIllegalArgumentException().isThrownBy(() -> new CappedLineReader(text(""), 3, 4));
		assertThatIllegalArgumentException().isThrownBy(() -> new CappedLineReader(text(""), 0, 0));
	}

	/** Bytes {@code a}, endless or up to a count, without allocating. */
	private static final class EndlessInputStream extends InputStream {

		private final long length;

		private long read;

		EndlessInputStream() {
			this(Long.MAX_VALUE);
		}

		EndlessInputStream(long length) {
			this.length = length;
		}

		@Override
		public int read() {
			if (this.read >= this.length) {
				return -1;
			}
			this.read++;
			return 'a';
		}

		@Override
		public int read(byte[] bytes, int offset, int count) {
			int n = (int) Math.min(count, this.length - this.read);
			if (n <= 0) {
				return -1;
			}
			Arrays.fill(bytes, offset, offset + n, (byte) 'a');
			this.read += n;
			return n;
		}

	}

	/** A stream that gives at most 100 bytes a read, as a pipe may. */
	private static final class TrickleInputStream extends InputStream {

		private final InputStream input;

		TrickleInputStream(InputStream input) {
			this.input = input;
		}

		@Override
		public int read() throws IOException {
			return this.input.read();
		}

		@Override
		public int read(byte[] bytes, int offset, int count) throws IOException {
			return this.input.read(bytes, offset, Math.min(count, 100));
		}

	}

}
