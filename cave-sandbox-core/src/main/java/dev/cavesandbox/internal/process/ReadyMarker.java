package dev.cavesandbox.internal.process;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * The ready marker {@value LauncherContract#HANDOVER_READY} that a launcher of
 * {@code --handover} writes on stdout once its set-up is done, before the command exists:
 * {@link #await} reads it (a warm sandbox's preparation), {@link #dropped} takes it off
 * the front of the stdout that the caller reads (a cold launch, whose frame is written at
 * once).
 */
public final class ReadyMarker {

	private static final byte[] MARKER = LauncherContract.HANDOVER_READY.getBytes(StandardCharsets.US_ASCII);

	private ReadyMarker() {
	}

	/**
	 * Read exactly the marker's 8 bytes.
	 * @param stdout the launcher's stdout, of which nothing else is read
	 * @return whether they were the marker; {@code false} at an end of file before them
	 * (the set-up failed) or other bytes
	 * @throws IOException if the stream could not be read
	 */
	public static boolean await(InputStream stdout) throws IOException {
		return Arrays.equals(stdout.readNBytes(MARKER.length), MARKER);
	}

	/**
	 * Remove the first marker that starts a line (after {@code --check}'s lines, the
	 * probe's case).
	 * @param stdout what the launcher wrote
	 * @return the bytes without it, or {@code stdout} itself where there is none
	 */
	public static byte[] removedFromALine(byte[] stdout) {
		for (int at = 0; at + MARKER.length <= stdout.length; at++) {
			if ((at == 0 || stdout[at - 1] == '\n')
					&& Arrays.equals(stdout, at, at + MARKER.length, MARKER, 0, MARKER.length)) {
				byte[] without = new byte[stdout.length - MARKER.length];
				System.arraycopy(stdout, 0, without, 0, at);
				System.arraycopy(stdout, at + MARKER.length, without, at, stdout.length - at - MARKER.length);
				return without;
			}
		}
		return stdout;
	}

	/**
	 * Return the stream without the marker at its front: on the first read, up to 8 bytes
	 * are read; if they are the marker they are dropped, else (a launch that failed
	 * before it, which writes nothing there) they are what the stream gives first.
	 * @param stdout the launcher's stdout
	 * @return the command's output
	 */
	static InputStream dropped(InputStream stdout) {
		return new FilterInputStream(stdout) {

			private byte[] front = new byte[0];

			private boolean checked;

			private int next;

			private byte[] front() throws IOException {
				if (!this.checked) {
					byte[] read = this.in.readNBytes(MARKER.length);
					this.front = Arrays.equals(read, MARKER) ? new byte[0] : read;
					this.checked = true;
				}
				return this.front;
			}

			@Override
			public int read() throws IOException {
				byte[] bytes = front();
				if (this.next < bytes.length) {
					return bytes[this.next++] & 0xff;
				}
				return this.in.read();
			}

			@Override
			public int read(byte[] buffer, int offset, int length) throws IOException {
				byte[] bytes = front();
				if (this.next < bytes.length && length > 0) {
					int count = Math.min(length, bytes.length - this.next);
					System.arraycopy(bytes, this.next, buffer, offset, count);
					this.next += count;
					return count;
				}
				return this.in.read(buffer, offset, length);
			}

			@Override
			public int available() throws IOException {
				return this.checked ? (this.front.length - this.next) + this.in.available() : 0;
			}

			@Override
			public long skip(long count) throws IOException {
				int left = front().length - this.next;
				if (left > 0) {
					int skipped = (int) Math.min(count, left);
					this.next += skipped;
					return skipped;
				}
				return this.in.skip(count);
			}

			@Override
			public boolean markSupported() {
				return false;
			}

		};
	}

}
