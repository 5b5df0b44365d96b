package dev.cavesandbox;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The resources one execution's command may use. Immutable; {@code null} means "not set":
 * in the executor's settings, no limit; in a request, the executor's value. Every set
 * value is positive. The Spring Boot starter binds them from
 * {@code cave.sandbox.limits.*}.
 * <p>
 * On Linux the launcher sets them as resource limits of the command before it runs
 * ({@code setrlimit(2)}; {@code RLIMIT_CORE} is always 0), so that each process of the
 * command's tree inherits them; the private tmpfs size is a mount option. What each limit
 * bounds, and where it cannot, is in the component descriptions below and in
 * docs/resource-limits.md.
 *
 * @param memory the data memory of each process of the command, in bytes
 * ({@code RLIMIT_DATA}: private writable mappings and the heap; since Linux 4.7 it does
 * not count reserved address space that was never made writable, so a child JVM's large
 * reservations pass); an allocation beyond it fails with {@code ENOMEM}. Default
 * {@link #DEFAULT_MEMORY}.
 * @param processes how many processes and threads of the command may exist at once
 * ({@code RLIMIT_NPROC}); a fork or a thread beyond it fails with {@code EAGAIN}. Counted
 * per user in the command's user namespace (bwrap, unshare, namespaces); on seccomp,
 * which has none, every task of the JVM's uid counts: the launcher adds those it sees at
 * the start outside the JVM's tree, so the JVM's executions there share the limit. A JVM
 * running as root is exempt (the kernel does not apply it to uid 0). Default
 * {@link #DEFAULT_PROCESSES}.
 * @param cpuTime the CPU time of each process, rounded up to whole seconds
 * ({@code RLIMIT_CPU}): {@code SIGXCPU} when it is used up, {@code SIGKILL} one second of
 * CPU later. Default none.
 * @param fileSize the largest file each process may write, in bytes
 * ({@code RLIMIT_FSIZE}): a write beyond it gets {@code SIGXFSZ}. Default none.
 * @param openFiles how many descriptors each process may have open
 * ({@code RLIMIT_NOFILE}). Default none (what the JVM has).
 * @param tmpfsSize the size of each private tmpfs that replaces a hidden directory, in
 * bytes; a write beyond it fails with {@code ENOSPC}. Default
 * {@link #DEFAULT_TMPFS_SIZE}.
 */
public record ResourceLimits(@Nullable Long memory, @Nullable Integer processes, @Nullable Duration cpuTime,
		@Nullable Long fileSize, @Nullable Integer openFiles, @Nullable Long tmpfsSize) {

	/** The default memory limit of each process: 4 GiB. */
	public static final long DEFAULT_MEMORY = 4L * 1024 * 1024 * 1024;

	/** The default process limit: 512 processes and threads at once. */
	public static final int DEFAULT_PROCESSES = 512;

	/** The default size of each private tmpfs: 256 MiB. */
	public static final long DEFAULT_TMPFS_SIZE = 256L * 1024 * 1024;

	/** No value set. */
	public static final ResourceLimits NONE = new ResourceLimits(null, null, null, null, null, null);

	public ResourceLimits {
		requirePositive("memory", memory);
		requirePositive("processes", (processes != null) ? processes.longValue() : null);
		if (cpuTime != null && (cpuTime.isNegative() || cpuTime.isZero())) {
			throw new IllegalArgumentException("cpuTime must be positive, but was " + cpuTime);
		}
		requirePositive("fileSize", fileSize);
		requirePositive("openFiles", (openFiles != null) ? openFiles.longValue() : null);
		requirePositive("tmpfsSize", tmpfsSize);
	}

	/**
	 * Return the defaults of the executor's settings: {@link #DEFAULT_MEMORY},
	 * {@link #DEFAULT_PROCESSES} and {@link #DEFAULT_TMPFS_SIZE}, the others not set.
	 * @return the defaults
	 */
	public static ResourceLimits defaults() {
		return new ResourceLimits(DEFAULT_MEMORY, DEFAULT_PROCESSES, null, null, null, DEFAULT_TMPFS_SIZE);
	}

	/**
	 * Return these limits with every value that {@code overrides} sets replaced by it.
	 * @param overrides the values that win, such as a request's
	 * @return the merged limits
	 */
	public ResourceLimits overriddenBy(ResourceLimits overrides) {
		Objects.requireNonNull(overrides, "overrides must not be null");
		return new ResourceLimits(pick(overrides.memory, this.memory), pick(overrides.processes, this.processes),
				pick(overrides.cpuTime, this.cpuTime), pick(overrides.fileSize, this.fileSize),
				pick(overrides.openFiles, this.openFiles), pick(overrides.tmpfsSize, this.tmpfsSize));
	}

	/**
	 * Return the CPU time limit in whole seconds, rounded up.
	 * @return the seconds, or {@code null} when not set
	 */
	public @Nullable Long cpuSeconds() {
		if (this.cpuTime == null) {
			return null;
		}
		long seconds = this.cpuTime.getSeconds();
		return (this.cpuTime.getNano() > 0) ? seconds + 1 : seconds;
	}

	/**
	 * Start building limits with no value set.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder(NONE);
	}

	/**
	 * Start building limits from these.
	 * @return a builder with these values
	 */
	public Builder toBuilder() {
		return new Builder(this);
	}

	private static <T> @Nullable T pick(@Nullable T first, @Nullable T second) {
		return (first != null) ? first : second;
	}

	private static void requirePositive(String name, @Nullable Long value) {
		if (value != null && value <= 0) {
			throw new IllegalArgumentException(name + " must be positive, but was " + value);
		}
	}

	/**
	 * A builder of {@link ResourceLimits}.
	 */
	public static final class Builder {

		private @Nullable Long memory;

		private @Nullable Integer processes;

		private @Nullable Duration cpuTime;

		private @Nullable Long fileSize;

		private @Nullable Integer openFiles;

		private @Nullable Long tmpfsSize;

		private Builder(ResourceLimits limits) {
			this.memory = limits.memory;
			this.processes = limits.processes;
			this.cpuTime = limits.cpuTime;
			this.fileSize = limits.fileSize;
			this.openFiles = limits.openFiles;
			this.tmpfsSize = limits.tmpfsSize;
		}

		/**
		 * Set the memory of each process.
		 * @param bytes the bytes, positive
		 * @return this builder
		 */
		public Builder memory(long bytes) {
			this.memory = bytes;
			return this;
		}

		/**
		 * Set how many processes and threads may exist at once.
		 * @param processes the count, positive
		 * @return this builder
		 */
		public Builder processes(int processes) {
			this.processes = processes;
			return this;
		}

		/**
		 * Set the CPU time of each process.
		 * @param cpuTime the time, positive; rounded up to whole seconds
		 * @return this builder
		 */
		public Builder cpuTime(Duration cpuTime) {
			this.cpuTime = cpuTime;
			return this;
		}

		/**
		 * Set the largest file each process may write.
		 * @param bytes the bytes, positive
		 * @return this builder
		 */
		public Builder fileSize(long bytes) {
			this.fileSize = bytes;
			return this;
		}

		/**
		 * Set how many descriptors each process may have open.
		 * @param openFiles the count, positive
		 * @return this builder
		 */
		public Builder openFiles(int openFiles) {
			this.openFiles = openFiles;
			return this;
		}

		/**
		 * Set the size of each private tmpfs.
		 * @param bytes the bytes, positive
		 * @return this builder
		 */
		public Builder tmpfsSize(long bytes) {
			this.tmpfsSize = bytes;
			return this;
		}

		/**
		 * Build the limits.
		 * @return the limits
		 * @throws IllegalArgumentException if a value is not positive
		 */
		public ResourceLimits build() {
			return new ResourceLimits(this.memory, this.processes, this.cpuTime, this.fileSize, this.openFiles,
					this.tmpfsSize);
		}

	}

}
