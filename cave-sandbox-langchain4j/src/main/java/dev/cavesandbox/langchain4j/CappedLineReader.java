package dev.cavesandbox.langchain4j;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The lines of UTF-8 text of a stream that a hostile process writes, read holding at most
 * a given number of bytes of one line, where {@code BufferedReader.readLine()} holds a
 * line whole however long it is. A line ends at {@code \n} (a {@code \r} before it is
 * dropped), the last one at the end of the stream. A line of more than {@code cap} bytes
 * is returned as soon as its {@code cap + 1}th byte is read, {@linkplain Line#cut() cut}
 * to its first {@code shown} bytes; the next {@link #next()} first skips the rest of it,
 * up to its line break, through a buffer of {@value #BUFFER_SIZE} bytes, holding none of
 * it. So a line costs at most {@code cap} bytes, plus the buffer, however long it is. For
 * one reader thread.
 */
final class CappedLineReader implements Closeable {

	static final int BUFFER_SIZE = 8192;

	private final InputStream input;

	private final int cap;

	private final int shown;

	private final byte[] buffer = new byte[BUFFER_SIZE];

	private int position;

	private int limit;

	private boolean skipping;

	/**
	 * Create a reader.
	 * @param input the stream, closed by {@link #close()}
	 * @param cap the most bytes of one line returned whole (without its line break)
	 * @param shown how many bytes of a line past the cap are returned, at most
	 * {@code cap}
	 */
	CappedLineReader(InputStream input, int cap, int shown) {
		if (cap < 1 || shown < 0 || shown > cap) {
			throw new IllegalArgumentException("cap must be positive and shown between 0 and cap");
		}
		this.input = input;
		this.cap = cap;
		this.shown = shown;
	}

	/**
	 * Read the next line, or the first bytes of a line past the cap.
	 * @return the line; {@code null} at the end of the stream
	 * @throws IOException reading failed
	 */
	@Nullable Line next() throws IOException {
		if (this.skipping && !skipToLineBreak()) {
			return null;
		}
		this.skipping = false;
		List<byte[]> chunks = new ArrayList<>();
		int length = 0;
		while (true) {
			if (this.position == this.limit && !fill()) {
				return (length > 0) ? whole(chunks, length) : null;
			}
			int lineBreak = indexOfLineBreak();
			int end = (lineBreak >= 0) ? lineBreak : this.limit;
			int taken = Math.min(end - this.position, this.cap - length);
			if (taken > 0) {
				chunks.add(Arrays.copyOfRange(this.buffer, this.position, this.position + taken));
				length += taken;
			}
			if (taken < end - this.position) {
				this.position += taken;
				this.skipping = true;
				return cut(chunks);
			}
			this.position = end;
			if (lineBreak >= 0) {
				this.position++;
				return whole(chunks, length);
			}
		}
	}

	private boolean skipToLineBreak() throws IOException {
		while (this.position < this.limit || fill()) {
			int lineBreak = indexOfLineBreak();
			if (lineBreak >= 0) {
				this.position = lineBreak + 1;
				return true;
			}
			this.position = this.limit;
		}
		return false;
	}

	private int indexOfLineBreak() {
		for (int i = this.position; i < this.limit; i++) {
			if (this.buffer[i] == '\n') {
				return i;
			}
		}
		return -1;
	}

	private boolean fill() throws IOException {
		int read;
		do {
			read = this.input.read(this.buffer);
		}
		while (read == 0);
		if (read < 0) {
			return false;
		}
		this.position = 0;
		this.limit = read;
		return true;
	}

	private static Line whole(List<byte[]> chunks, int length) {
		byte[] line = join(chunks, length);
		int end = (length > 0 && line[length - 1] == '\r') ? length - 1 : length;
		return new Line(new String(line, 0, end, StandardCharsets.UTF_8), false);
	}

	private Line cut(List<byte[]> chunks) {
		byte[] prefix = join(chunks, this.shown);
		return new Line(new String(prefix, 0, wholeCharacters(prefix), StandardCharsets.UTF_8), true);
	}

	/** The first {@code length} bytes of the chunks, or all of them if fewer. */
	private static byte[] join(List<byte[]> chunks, int length) {
		byte[] joined = new byte[length];
		int at = 0;
		for (byte[] chunk : chunks) {
			int taken = Math.min(chunk.length, length - at);
			System.arraycopy(chunk, 0, joined, at, taken);
			at += taken;
			if (at == length) {
				break;
			}
		}
		return (at == length) ? joined : Arrays.copyOf(joined, at);
	}

	/** The length of the bytes without a character that the cut split in two. */
	private static int wholeCharacters(byte[] bytes) {
		int start = bytes.length - 1;
		while (start > 0 && start > bytes.length - 4 && (bytes[start] & 0xC0) == 0x80) {
			start--;
		}
		if (start < 0) {
			return 0;
		}
		int lead = bytes[start] & 0xFF;
		int size = (lead >= 0xF0) ? 4 : (lead >= 0xE0) ? 3 : (lead >= 0xC0) ? 2 : 1;
		return (start + size > bytes.length) ? start : bytes.length;
	}

	/**
	 * Return the text cut to a number of characters, with {@code ...} when cut.
	 * @param text the text
	 * @param length the most characters kept
	 * @return the text, or its first characters then {@code ...}
	 */
	static String prefix(String text, int length) {
		if (text.length() <= length) {
			return text;
		}
		int end = Character.isHighSurrogate(text.charAt(length - 1)) ? length - 1 : length;
		return text.substring(0, end) + "...";
	}

	@Override
	public void close() throws IOException {
		this.input.close();
	}

	/**
	 * One line read.
	 *
	 * @param text the line without its line break; the first bytes of a line past the cap
	 * @param cut whether the line passed the cap
	 */
	record Line(String text, boolean cut) {

	}

}
