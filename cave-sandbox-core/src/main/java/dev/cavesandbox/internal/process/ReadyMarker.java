package dev.cavesandbox.internal.process;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * The two markers that a launcher of {@code --handover} writes on stdout (launcher.h,
 * {@code --handover}): the ready marker {@value LauncherContract#HANDOVER_READY} once its
 * set-up is done, before the command exists, and the started marker
 * {@value LauncherContract#HANDOVER_STARTED} once the frame was read and checked, right
 * before {@code execve(2)}. {@link #await} reads the first (a warm sandbox's
 * preparation); {@link #dropped} takes what is left of them off the front of the stdout
 * that the caller reads and tells whether the command was started
 * ({@link Output#started()}); only the first 8 bytes after the ready marker are the
 * started marker, so a command whose own output begins with the same bytes keeps them.
 */
public final class ReadyMarker {

	private static final byte[] READY = LauncherContract.HANDOVER_READY.getBytes(StandardCharsets.US_ASCII);

	private static final byte[] STARTED = LauncherContract.HANDOVER_STARTED.getBytes(StandardCharsets.US_ASCII);

	private ReadyMarker() {
	}

	/**
	 * Read exactly the ready marker's 8 bytes.
	 * @param stdout the launcher's stdout, of which nothing else is read
	 * @return whether they were the marker; {@code false} at an end of file before them
	 * (the set-up failed) or other bytes
	 * @throws IOException if the stream could not be read
	 */
	public static boolean await(InputStream stdout) throws IOException {
		return Arrays.equals(stdout.readNBytes(READY.length), READY);
	}

	/**
	 * Remove the first ready marker that starts a line (after {@code --check}'s lines,
	 * the probe's case), and the started marker right after it.
	 * @param stdout what the launcher wrote
	 * @return the bytes without them, or {@code stdout} itself where there is no ready
	 * marker
	 */
	public static byte[] removedFromALine(byte[] stdout) {
		for (int at = 0; at + READY.length <= stdout.length; at++) {
			if ((at == 0 || stdout[at - 1] == '\n') && startsWith(stdout, at, READY)) {
				int length = READY.length + (startsWith(stdout, at + READY.length, STARTED) ? STARTED.length : 0);
				byte[] without = new byte[stdout.length - length];
				System.arraycopy(stdout, 0, without, 0, at);
				System.arraycopy(stdout, at + length, without, at, stdout.length - at - length);
				return without;
			}
		}
		return stdout;
	}

	private static boolean startsWith(byte[] bytes, int at, byte[] marker) {
		return at + marker.length <= bytes.length
				&& Arrays.equals(bytes, at, at + marker.length, marker, 0, marker.length);
	}

	/**
	 * Return the stream without the markers at its front: on the first read, the ready
	 * marker's 8 bytes are read (unless {@code readyRead}), then the started marker's 8;
	 * what is not the marker it should be (a launch that failed before it, which writes
	 * nothing more there) is what the stream gives first.
	 * @param stdout the launcher's stdout
	 * @param readyRead whether the ready marker was read already ({@link #await}, a warm
	 * sandbox)
	 * @return the command's output
	 */
	static Output dropped(InputStream stdout, boolean readyRead) {
		return new Output(stdout, readyRead);
	}

	/**
	 * A launcher's stdout from which the markers are dropped on the first read.
	 */
	static final class Output extends FilterInputStream {

		/**
		 * How long {@link #neverStarted()} waits for a caller that is reading the
		 * markers.
		 */
		private static final long READER_WAIT_SECONDS = 1;

		private final boolean readyRead;

		/** Held while the markers are read: by the caller's first read, or at the end. */
		private final ReentrantLock checking = new ReentrantLock();

		private byte[] front = new byte[0];

		private boolean checked;

		private volatile boolean started;

		private int next;

		private Output(InputStream in, boolean readyRead) {
			super(in);
			this.readyRead = readyRead;
		}

		/**
		 * Return whether the started marker was read: the command was about to start.
		 * Meaningful once the stream was read to its end; {@code false} before its first
		 * read.
		 * @return whether the launcher wrote its started marker
		 */
		boolean started() {
			return this.started;
		}

		/**
		 * Return whether the command was never started, asked once the process tree has
		 * ended and nothing of it can write any more: the markers were read, by the
		 * caller or here, and the started marker was not among them; or fewer bytes than
		 * the markers' wait in the pipe, so the launcher never wrote them all (nothing is
		 * read then, and the caller's first read still gets what there is). Never blocks
		 * longer than a second, for a caller that is reading the markers.
		 * @return {@code true} only where the started marker's absence was seen;
		 * {@code false} where it came, or where the stream could not be read (the caller
		 * closed it first) or was being read longer than that
		 */
		boolean neverStarted() {
			try {
				if (!this.checking.tryLock(READER_WAIT_SECONDS, TimeUnit.SECONDS)) {
					return false;
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			try {
				int markers = (this.readyRead ? 0 : READY.length) + STARTED.length;
				if (!this.checked && this.in.available() < markers) {
					return true;
				}
				front();
				return !this.started;
			}
			catch (IOException ex) {
				return false;
			}
			finally {
				this.checking.unlock();
			}
		}

		private byte[] front() throws IOException {
			this.checking.lock();
			try {
				return checkedFront();
			}
			finally {
				this.checking.unlock();
			}
		}

		private byte[] checkedFront() throws IOException {
			if (!this.checked) {
				this.checked = true;
				byte[] read = this.readyRead ? READY : this.in.readNBytes(READY.length);
				if (!Arrays.equals(read, READY)) {
					this.front = read;
					return this.front;
				}
				read = this.in.readNBytes(STARTED.length);
				this.started = Arrays.equals(read, STARTED);
				this.front = this.started ? new byte[0] : read;
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

		/**
		 * Return the bytes that can be read without blocking, at least: before the first
		 * read, what waits in the pipe less the markers that may still lead it (an
		 * underestimate where they do not, as {@link InputStream#available()} allows).
		 */
		@Override
		public int available() throws IOException {
			if (this.checked) {
				return (this.front.length - this.next) + this.in.available();
			}
			int markers = (this.readyRead ? 0 : READY.length) + STARTED.length;
			return Math.max(0, this.in.available() - markers);
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

	}

}
