package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * The head of a client's request, framed from the stream: the bytes up to and including
 * the first empty line ({@code \r\n\r\n}), and the bytes read after it (the start of a
 * body, or of the tunnelled stream after a CONNECT), which are never dropped. Only the
 * framing is done here; the head is parsed by Netty's decoder.
 *
 * @param head the head, ending with {@code \r\n\r\n}
 * @param rest the bytes read after the head
 */
record RequestHead(byte[] head, byte[] rest) {

	/** The largest head accepted, its empty line included. */
	static final int MAX_SIZE = 16 * 1024;

	/**
	 * Read a head from the client.
	 * @param client the client
	 * @return the head, or {@code null} when the client closed the connection before
	 * sending anything
	 * @throws TooLargeException when no head ended within {@link #MAX_SIZE} bytes
	 * @throws IncompleteException when the client closed the connection within a head
	 * @throws IOException when reading fails
	 */
	static @Nullable RequestHead read(ReadableByteChannel client) throws IOException {
		ByteBuffer buffer = ByteBuffer.allocate(MAX_SIZE);
		int scanned = 0;
		while (buffer.hasRemaining()) {
			if (client.read(buffer) < 0) {
				if (buffer.position() == 0) {
					return null;
				}
				throw new IncompleteException();
			}
			int end = endOfHead(buffer.array(), Math.max(0, scanned - 3), buffer.position());
			if (end >= 0) {
				return new RequestHead(Arrays.copyOfRange(buffer.array(), 0, end),
						Arrays.copyOfRange(buffer.array(), end, buffer.position()));
			}
			scanned = buffer.position();
		}
		throw new TooLargeException();
	}

	private static int endOfHead(byte[] bytes, int from, int to) {
		for (int i = from; i + 3 < to; i++) {
			if (bytes[i] == '\r' && bytes[i + 1] == '\n' && bytes[i + 2] == '\r' && bytes[i + 3] == '\n') {
				return i + 4;
			}
		}
		return -1;
	}

	/** No head ended within {@link RequestHead#MAX_SIZE} bytes. */
	static final class TooLargeException extends IOException {

		TooLargeException() {
			super("The request head is larger than " + MAX_SIZE + " bytes");
		}

	}

	/** The client closed the connection within a head. */
	static final class IncompleteException extends IOException {

		IncompleteException() {
			super("The client closed the connection within the request head");
		}

	}

}
