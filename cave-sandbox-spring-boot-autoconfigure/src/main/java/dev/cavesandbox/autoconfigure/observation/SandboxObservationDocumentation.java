package dev.cavesandbox.autoconfigure.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of cave-sandbox. With Spring Boot's default handlers each one gives a
 * timer ({@code cave.sandbox.execution}) and a long-task timer of running executions
 * ({@code cave.sandbox.execution.active}), tagged with the low-cardinality keys, and a
 * span when tracing is present.
 */
public enum SandboxObservationDocumentation implements ObservationDocumentation {

	/**
	 * One execution of an {@link dev.cavesandbox.IsolatedExecutor}, from the call
	 * (including the wait for a free slot) until the whole process tree has ended, or
	 * until the execution was refused.
	 */
	EXECUTION {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultSandboxExecutionObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeyNames.values();
		}

	},

	/**
	 * One process started by {@link dev.cavesandbox.IsolatedExecutor#start}, from the
	 * call until its whole process tree has ended (a long-running server's whole
	 * lifetime), or until the start was refused: timer {@code cave.sandbox.process}, and
	 * {@code cave.sandbox.process.active} counts the started processes that still run.
	 * Same keys as {@link #EXECUTION}.
	 */
	PROCESS {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultSandboxProcessObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeyNames.values();
		}

	};

	/**
	 * Low-cardinality keys: tags of the timers, attributes of the span.
	 */
	public enum LowCardinalityKeyNames implements KeyName {

		/**
		 * The mechanism that isolated the command (for example {@code unshare}), or
		 * {@code none}.
		 */
		MECHANISM("mechanism"),

		/**
		 * Whether the command ran without network access: {@code true} or {@code false}.
		 */
		ISOLATED("isolated"),

		/**
		 * How the execution ended: {@code SUCCESS} (exit code 0), {@code NON_ZERO_EXIT},
		 * {@code TIMEOUT} (the process tree was killed), {@code ERROR} (an exception;
		 * nothing ran or the execution was cancelled), {@code UNKNOWN} while it runs.
		 */
		OUTCOME("outcome"),

		/**
		 * The stable code of the failure (for example
		 * {@code cave_sandbox_os_network_isolation_unavailable}), the simple class name
		 * of an exception without a code, or {@code none}.
		 */
		ERROR_CODE("error.code"),

		/**
		 * The resource limit that ended the command, where that can be known: its
		 * property name ({@code cpu-time} or {@code file-size}, see
		 * {@link dev.cavesandbox.ResourceLimit}), or {@code none}.
		 */
		LIMIT("limit");

		private final String name;

		LowCardinalityKeyNames(String name) {
			this.name = name;
		}

		@Override
		public String asString() {
			return this.name;
		}

	}

	/**
	 * High-cardinality keys: attributes of the span only.
	 */
	public enum HighCardinalityKeyNames implements KeyName {

		/**
		 * The command, {@code argv[0]} only: its arguments are never recorded, since they
		 * may carry secrets.
		 */
		COMMAND("command"),

		/**
		 * The exit code of the command, when it ran to an end (137 after a timeout's
		 * SIGKILL).
		 */
		EXIT_CODE("exit.code");

		private final String name;

		HighCardinalityKeyNames(String name) {
			this.name = name;
		}

		@Override
		public String asString() {
			return this.name;
		}

	}

}
