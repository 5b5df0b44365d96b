package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One column of the compatibility table: a mechanism and the JVM that runs it. Every
 * mechanism of {@link LinuxMechanisms#ALL} as a root JVM (this one) and as an
 * unprivileged JVM (nobody's, {@link ContainerJvm} without confinement), then the
 * container shapes, whose JVM probes with mechanism {@code auto} and must get
 * {@code seccomp}: Docker's default profile as root and as nobody (the Kubernetes
 * restricted shape), reproduced by {@link ContainerConfinement}, and the same two in a
 * real container of Debian's {@code runc} ({@link RuncContainer}).
 *
 * @param column the column's title
 * @param kind the JVM and its confinement
 * @param mechanism the mechanism setting
 */
record CompatibilityShape(String column, Kind kind, MechanismChoice mechanism) {

	/** The mechanism the container shapes must get. */
	static final String CONTAINER_MECHANISM = "seccomp";

	/**
	 * The JVM of a shape and its confinement.
	 */
	enum Kind {

		/** This JVM, root. */
		ROOT_JVM,

		/** A child JVM of nobody's, no other confinement. */
		NOBODY_JVM,

		/** A root JVM under Docker's default profile and capabilities (reproduced). */
		DOCKER_DEFAULT,

		/** Nobody's JVM under Docker's default profile (reproduced): a restricted pod. */
		RESTRICTED_POD,

		/** A root JVM in a runc container shaped as {@code docker run}'s default. */
		RUNC_DOCKER_DEFAULT,

		/** Nobody's JVM in a runc container shaped as a restricted pod. */
		RUNC_RESTRICTED_POD

	}

	/** Every shape, in the table's order. */
	static List<CompatibilityShape> all() {
		List<CompatibilityShape> shapes = new ArrayList<>();
		for (MechanismChoice mechanism : LinuxMechanisms.ALL) {
			String name = mechanism.name().toLowerCase(Locale.ROOT);
			shapes.add(new CompatibilityShape(name + " root JVM", Kind.ROOT_JVM, mechanism));
			shapes.add(new CompatibilityShape(name + " nobody JVM", Kind.NOBODY_JVM, mechanism));
		}
		shapes.add(new CompatibilityShape("Docker default root", Kind.DOCKER_DEFAULT, MechanismChoice.AUTO));
		shapes.add(new CompatibilityShape("restricted pod", Kind.RESTRICTED_POD, MechanismChoice.AUTO));
		shapes.add(new CompatibilityShape("runc Docker default root", Kind.RUNC_DOCKER_DEFAULT, MechanismChoice.AUTO));
		shapes.add(new CompatibilityShape("runc restricted pod", Kind.RUNC_RESTRICTED_POD, MechanismChoice.AUTO));
		return shapes;
	}

	@Override
	public String toString() {
		return this.column;
	}

	/**
	 * Start what runs the programs in this shape: an executor of this JVM, or a child JVM
	 * whose probe's verdict is checked (the mechanism asked for, or {@code seccomp} in
	 * the containers).
	 * @param directory a directory of this shape's own
	 * @return the runner; the caller closes it
	 * @throws Exception if it cannot start, or its verdict is not the expected one
	 */
	Runner start(Path directory) throws Exception {
		return switch (this.kind) {
			case ROOT_JVM -> new ExecutorRunner(LinuxMechanisms.isolated(this.mechanism, (settings) -> settings));
			case NOBODY_JVM -> JvmRunner.checked(confined(directory, Profile.UNCONFINED, User.NOBODY),
					this.mechanism.name().toLowerCase(Locale.ROOT), null);
			case DOCKER_DEFAULT ->
				JvmRunner.checked(confined(directory, Profile.DOCKER_DEFAULT, User.ROOT), CONTAINER_MECHANISM, null);
			case RESTRICTED_POD ->
				JvmRunner.checked(confined(directory, Profile.DOCKER_DEFAULT, User.NOBODY), CONTAINER_MECHANISM, null);
			case RUNC_DOCKER_DEFAULT -> runc(directory, RuncContainer.Shape.DOCKER_DEFAULT);
			case RUNC_RESTRICTED_POD -> runc(directory, RuncContainer.Shape.KUBERNETES_RESTRICTED);
		};
	}

	/**
	 * A child JVM in a reproduced confinement, whose executor keeps its default work
	 * directory: a program's socket under its working directory then has the room it has
	 * in an application (a work directory in the test's directory would take some).
	 */
	private ContainerJvm confined(Path directory, Profile profile, User user) throws IOException {
		return ContainerJvm.start(directory, user, this.mechanism, true,
				(java, commands) -> ContainerConfinement.commandLine(directory, profile, user, java));
	}

	private Runner runc(Path directory, RuncContainer.Shape shape) throws Exception {
		Path jvm = Files.createDirectory(directory.resolve("jvm"));
		RuncContainer container = new RuncContainer(Files.createDirectory(directory.resolve("bundle")), shape, jvm);
		try {
			JvmRunner runner = JvmRunner.checked(
					ContainerJvm.start(jvm, shape.user(), this.mechanism, true, container::commandLine),
					CONTAINER_MECHANISM, container);
			// The container is what it is meant to be, as its JVM's control (no sandbox)
			// sees it.
			ContainerJvm.Result inside = runner.jvm()
				.unisolated("sh", "-c", "ls /sys/class/net; id -u; grep -E '^(CapEff|NoNewPrivs):' /proc/self/status");
			assertThat(inside.stdout()).as("the container's network, user and privileges; %s", inside.stderr())
				.isEqualTo(shape.inside());
			return runner;
		}
		catch (Exception | Error ex) {
			container.close();
			throw ex;
		}
	}

	/**
	 * Runs the programs in one shape.
	 */
	interface Runner extends AutoCloseable {

		/**
		 * Run a program in a private working directory with its deadline as timeout.
		 * @param program the program
		 * @return what it did
		 * @throws Exception if the runner fails (not the program)
		 */
		CompatibilityOutcome run(CompatibilityProgram program) throws Exception;

	}

	private record ExecutorRunner(ProcessIsolatedExecutor executor) implements Runner {

		@Override
		public CompatibilityOutcome run(CompatibilityProgram program) {
			ExecutionRequest request = ExecutionRequest.builder(program.argv()).timeout(program.deadline()).build();
			try {
				ExecutionResult result = this.executor.execute(request);
				return CompatibilityOutcome.of(program, result.exitCode(), result.timedOut(), result.stdoutText(),
						result.stderrText());
			}
			catch (CaveSandboxException ex) {
				return CompatibilityOutcome.error(ex.code(), ex.getMessage());
			}
		}

		@Override
		public void close() {
			this.executor.close();
		}

	}

	private record JvmRunner(ContainerJvm jvm, @Nullable RuncContainer container) implements Runner {

		/** The JVM as a runner, once its verdict is the expected mechanism. */
		static JvmRunner checked(ContainerJvm jvm, String mechanism, @Nullable RuncContainer container)
				throws Exception {
			JvmRunner runner = new JvmRunner(jvm, container);
			try {
				ContainerJvm.Verdict verdict = jvm.verdict();
				assertThat(verdict.available()).as("the child JVM's verdict %s; its log: %s", verdict, jvm.log())
					.isTrue();
				assertThat(verdict.mechanism()).as("the mechanism the child JVM's probe picked").isEqualTo(mechanism);
				return runner;
			}
			catch (Exception | Error ex) {
				runner.close();
				throw ex;
			}
		}

		@Override
		public CompatibilityOutcome run(CompatibilityProgram program) throws IOException {
			ContainerJvm.Result result = this.jvm.inPrivateDirectory(program.deadline(), program.argv());
			if (result.error() != null) {
				return CompatibilityOutcome.error(result.error(), result.stderr());
			}
			return CompatibilityOutcome.of(program, result.exitCode(), result.timedOut(), result.stdout(),
					result.stderr());
		}

		@Override
		public void close() throws Exception {
			try {
				this.jvm.close();
			}
			finally {
				if (this.container != null) {
					this.container.close();
				}
			}
		}

	}

}
