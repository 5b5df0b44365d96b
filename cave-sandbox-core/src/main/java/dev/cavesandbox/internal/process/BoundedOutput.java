package dev.cavesandbox.internal.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

import org.jspecify.annotations.Nullable;

/**
 * Drains one output stream of a child to its end, keeping at most {@code cap} bytes (in
 * memory or in the caller's sink) and discarding the rest, so the child is never blocked
 * by a full pipe and the heap never holds more than the cap. Bytes are kept unchanged.
 */
final class BoundedOutput {

	private static final int CHUNK = 64 * 1024;

	private final long cap;

	private final @Nullable OutputStream sink;

	private final @Nullable ByteArrayOutputStream buffer;

	private long kept;

	private boolean truncated;

	private boolean sinkFailed;

	BoundedOutput(long cap, @Nullable OutputStream sink) {
		this.cap = cap;
		this.sink = sink;
		this.buffer = (sink != null) ? null : new ByteArrayOutputStream((int) Math.min(cap, 8192));
	}

	/**
	 * Read the stream until its end (or until it is closed under us), then close it.
	 * @param in the stream
	 */
	void drain(InputStream in) {
		byte[] chunk = new byte[CHUNK];
		try (in) {
			int n;
			while ((n = in.read(chunk)) != -1) {
				accept(chunk, n);
			}
		}
		catch (IOException ex) {
			// The stream was closed because the execution ended; what was read is kept.
		}
		flushSink();
	}

	private synchronized void accept(byte[] chunk, int n) {
		int keep = (int) Math.min(n, this.cap - this.kept);
		if (keep < n) {
			this.truncated = true;
		}
		if (keep <= 0) {
			return;
		}
		this.kept += keep;
		if (this.buffer != null) {
			this.buffer.write(chunk, 0, keep);
		}
		else if (!this.sinkFailed) {
			try {
				this.sink.write(chunk, 0, keep);
			}
			catch (IOException ex) {
				// A broken sink must not block the child: keep draining, discard.
				this.sinkFailed = true;
			}
		}
	}

	private synchronized void flushSink() {
		if (this.sink != null && !this.sinkFailed) {
			try {
				this.sink.flush();
			}
			catch (IOException ex) {
				this.sinkFailed = true;
			}
		}
	}

	synchronized byte[] bytes() {
		return (this.buffer != null) ? this.buffer.toByteArray() : new byte[0];
	}

	synchronized boolean truncated() {
		return this.truncated;
	}

}
