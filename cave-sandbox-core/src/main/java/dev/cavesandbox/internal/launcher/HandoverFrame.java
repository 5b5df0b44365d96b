package dev.cavesandbox.internal.launcher;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.InvalidExecutionRequestException;

/**
 * The frame in which the executor hands a command to a launcher started with
 * {@code --handover} ({@link Launcher#HANDOVER}), on the launcher's stdin once it has
 * written {@value LauncherContract#HANDOVER_READY}; {@code launcher.h}, section
 * "Hand-over", is the protocol. Layout, in the host's native byte order:
 * {@value LauncherContract#HANDOVER_MAGIC}, {@code uint32} version
 * ({@value LauncherContract#HANDOVER_VERSION}), {@code uint32} length of the body (at
 * most {@value LauncherContract#HANDOVER_MAX} bytes), then the body: {@code uint32 argc},
 * {@code uint32 envc}, the arguments and the {@code NAME=VALUE} variables, each ended by
 * a NUL. Strings are encoded as {@link ProcessBuilder} encodes them
 * ({@code sun.jnu.encoding}). The command's stdin follows the frame on the same pipe.
 */
public final class HandoverFrame {

	/** magic, version, length. */
	private static final int HEADER = 16;

	/** What {@code execve(2)} counts for each string's pointer on a 64-bit host. */
	private static final int POINTER = 8;

	/**
	 * The longest string, with its NUL, that {@code execve(2)} takes: the kernel's
	 * {@code MAX_ARG_STRLEN}, 32 pages of 4 KiB.
	 */
	static final int MAX_STRING = 32 * 4096;

	/**
	 * What {@code execve(2)} takes of strings and their pointers together: a quarter of
	 * the default 8 MiB stack limit ({@code bprm_stack_limits} in {@code fs/exec.c}),
	 * less a page for the program's path, which the kernel copies too.
	 */
	static final long KERNEL_ARGUMENTS = 8L * 1024 * 1024 / 4 - 4096;

	private static final Charset ENCODING = encoding();

	private HandoverFrame() {
	}

	/**
	 * Encode a command and its whole environment.
	 * @param argv the command and its arguments, at least one
	 * @param environment every variable the command gets, and nothing of the wrappers'
	 * @return the frame
	 * @throws InvalidExecutionRequestException if a string holds a NUL, or a variable's
	 * name is empty or holds {@code =}
	 * @throws IOException what the spawn of the command would have thrown where the
	 * kernel's {@code execve(2)} refuses it ({@code E2BIG}, as {@link ProcessBuilder}
	 * reports it): a string longer than {@value #MAX_STRING} bytes with its NUL, strings
	 * and their pointers above {@value #KERNEL_ARGUMENTS} bytes, or a body above
	 * {@value LauncherContract#HANDOVER_MAX} bytes (about {@code ARG_MAX}); the launcher
	 * is then never spawned
	 */
	public static byte[] encode(List<String> argv, Map<String, String> environment) throws IOException {
		if (argv.isEmpty()) {
			throw new IllegalArgumentException("argv must hold the command");
		}
		List<byte[]> strings = new ArrayList<>(argv.size() + environment.size());
		long length = 8;
		for (String argument : argv) {
			length += add(strings, argument, "argument");
		}
		for (Map.Entry<String, String> variable : environment.entrySet()) {
			String name = variable.getKey();
			if (name.isEmpty() || name.indexOf('=') >= 0) {
				throw new InvalidExecutionRequestException(
						"environment variable name '" + name + "' is empty or contains '='; give a name without '='");
			}
			length += add(strings, name + "=" + variable.getValue(), "environment variable " + name);
		}
		if (length > LauncherContract.HANDOVER_MAX) {
			throw tooLong(argv, "its arguments and environment take " + length + " bytes, more than the "
					+ LauncherContract.HANDOVER_MAX + " a sandbox takes (about ARG_MAX)");
		}
		checkKernel(argv, length - 8 + (long) POINTER * strings.size());
		for (byte[] string : strings) {
			if (string.length + 1 > MAX_STRING) {
				throw tooLong(argv, "an argument or variable takes " + (string.length + 1) + " bytes, more than the "
						+ MAX_STRING + " the kernel takes (MAX_ARG_STRLEN)");
			}
		}
		ByteArrayOutputStream frame = new ByteArrayOutputStream(HEADER + (int) length);
		frame.writeBytes(LauncherContract.HANDOVER_MAGIC.getBytes(StandardCharsets.US_ASCII));
		frame.writeBytes(integers(LauncherContract.HANDOVER_VERSION, (int) length));
		frame.writeBytes(integers(argv.size(), environment.size()));
		for (byte[] string : strings) {
			frame.writeBytes(string);
			frame.write(0);
		}
		return frame.toByteArray();
	}

	/**
	 * Check that the kernel's {@code execve(2)} would take these arguments with an empty
	 * environment, before anything is spawned or claimed (the environment is checked by
	 * {@link #encode}).
	 * @param argv the command and its arguments
	 * @throws IOException as {@link #encode} does for {@code E2BIG}
	 */
	public static void checkArguments(List<String> argv) throws IOException {
		long bytes = 0;
		for (String argument : argv) {
			bytes += argument.getBytes(ENCODING).length + 1 + POINTER;
		}
		checkKernel(argv, bytes);
	}

	private static void checkKernel(List<String> argv, long bytes) throws IOException {
		if (bytes > KERNEL_ARGUMENTS) {
			throw tooLong(argv, "execve(2) would count " + bytes + " bytes of strings and their pointers, more than "
					+ "the " + KERNEL_ARGUMENTS + " it takes (ARG_MAX, a quarter of the 8 MiB stack)");
		}
	}

	/**
	 * As {@link ProcessBuilder#start()} reports {@code E2BIG}; pass large data as stdin.
	 */
	private static IOException tooLong(List<String> argv, String detail) {
		return new IOException("Cannot run program \"" + argv.get(0) + "\": error=7, Argument list too long (" + detail
				+ "; pass large data as stdin or input files)");
	}

	private static int add(List<byte[]> strings, String string, String what) {
		if (string.indexOf('\0') >= 0) {
			throw new InvalidExecutionRequestException(what + " contains a NUL character, which no command can get");
		}
		byte[] bytes = string.getBytes(ENCODING);
		strings.add(bytes);
		return bytes.length + 1;
	}

	/** Two {@code uint32} in the host's byte order. */
	static byte[] integers(int first, int second) {
		return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(first).putInt(second).array();
	}

	private static Charset encoding() {
		try {
			return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
		}
		catch (IllegalArgumentException ex) {
			return StandardCharsets.UTF_8;
		}
	}

}
