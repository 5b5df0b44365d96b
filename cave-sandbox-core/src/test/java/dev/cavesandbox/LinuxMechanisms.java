package dev.cavesandbox;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;

import static dev.cavesandbox.WarmPoolSettings.OFF;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one list of Linux mechanisms that every behavioural test of the sandbox runs for: a
 * test annotated {@link ForEachLinuxMechanism} runs once per entry, so a new mechanism (a
 * mechanism of the ladder) joins every such test by being added to {@link #ALL}. A
 * mechanism that the probe does not verify on the test host fails the test rather than
 * skipping it: CI installs every mechanism.
 */
public final class LinuxMechanisms {

	/** Every Linux mechanism, strongest first. */
	public static final List<MechanismChoice> ALL = List.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE,
			MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);

	/**
	 * The size of the pool of warm sandboxes of the executors that {@link #builder} and
	 * {@link #settings} start: the system property {@code cavesandbox.test.warm-size}, or
	 * {@code -1} where it is not set (the settings' default pool,
	 * {@link WarmPoolSettings#DEFAULT}), so that the boundary and break-in suites run
	 * with the pool off as well as on (issue 30: the warm path passes the cold path's
	 * tests), e.g.
	 * {@code ./mvnw -pl cave-sandbox-core verify -Dcavesandbox.test.warm-size=0}; a
	 * test's customizer may set a pool of its own. The name is outside
	 * {@code cave.sandbox.*}: Maven passes it to every module's tests, and a Spring
	 * environment would report it as an unknown {@code cave.sandbox} key
	 * (UnknownPropertiesTests).
	 */
	public static final int WARM_SIZE = Integer.getInteger("cavesandbox.test.warm-size", -1);

	private static final Map<SandboxSettings, IsolationCapability> verdicts = new ConcurrentHashMap<>();

	private LinuxMechanisms() {
	}

	/**
	 * The source of {@link ForEachLinuxMechanism}.
	 * @return every entry of {@link #ALL}
	 */
	public static Stream<MechanismChoice> all() {
		return ALL.stream();
	}

	/**
	 * Probe the settings once per test JVM and return the verdict, which must be
	 * available.
	 * @param settings the settings, with the mechanism to probe
	 * @return the available verdict
	 */
	public static IsolationCapability verified(SandboxSettings settings) {
		IsolationCapability capability = verdicts.computeIfAbsent(settings,
				(key) -> new NetworkIsolationProbe(key).probe());
		assertThat(capability.available()).as("probe verdict for %s: %s", settings.mechanism(), capability).isTrue();
		return capability;
	}

	/**
	 * Return the namespaces that a mechanism gives the command, as the probe verified it
	 * with the default settings: a test keys on them what it asserts of a mechanism that
	 * does not claim a namespace (its probe facts name it under {@code not given: }).
	 * @param mechanism the mechanism
	 * @return the namespaces of {@link SandboxMechanism#namespaces()}
	 */
	public static Set<LinuxNamespace> namespaces(MechanismChoice mechanism) {
		SandboxMechanism verified = verified(SandboxSettings.builder().mechanism(mechanism).build()).mechanism();
		assertThat(verified).isNotNull();
		return verified.namespaces();
	}

	/**
	 * Start the settings of a test's executor: the mechanism, and a pool of
	 * {@link #WARM_SIZE} warm sandboxes where that is set (not fitted to the test's
	 * further settings).
	 * @param mechanism the mechanism
	 * @return the builder
	 */
	public static SandboxSettings.Builder builder(MechanismChoice mechanism) {
		SandboxSettings.Builder builder = SandboxSettings.builder().mechanism(mechanism);
		return (WARM_SIZE >= 0) ? builder.warm(pool(WARM_SIZE)) : builder;
	}

	/**
	 * Return a test's settings: the mechanism and the customizer's, with a pool of
	 * {@link #WARM_SIZE} warm sandboxes where that is set, fewer where the settings allow
	 * fewer ({@link WarmPoolSettings#fitting}), unless the customizer sets a pool itself.
	 * @param mechanism the mechanism
	 * @param customizer further settings
	 * @return the settings
	 */
	public static SandboxSettings settings(MechanismChoice mechanism,
			UnaryOperator<SandboxSettings.Builder> customizer) {
		if (WARM_SIZE < 0) {
			return customizer.apply(SandboxSettings.builder().mechanism(mechanism)).build();
		}
		SandboxSettings unfitted = customizer.apply(SandboxSettings.builder().mechanism(mechanism).warm(OFF)).build();
		WarmPoolSettings pool = pool(WARM_SIZE).fitting(unfitted.maxConcurrent(),
				unfitted.linux().commandUserRange().size());
		return customizer.apply(SandboxSettings.builder().mechanism(mechanism).warm(pool)).build();
	}

	private static WarmPoolSettings pool(int size) {
		return new WarmPoolSettings(size, Duration.ofSeconds(WarmPoolSettings.DEFAULT_MAX_AGE_SECONDS));
	}

	/**
	 * Create an isolated executor for one mechanism, verified by the probe, with the
	 * settings of {@link #settings(MechanismChoice, UnaryOperator)}.
	 * @param mechanism the mechanism
	 * @param customizer further settings
	 * @return the executor; the caller closes it
	 */
	public static ProcessIsolatedExecutor isolated(MechanismChoice mechanism,
			UnaryOperator<SandboxSettings.Builder> customizer) {
		SandboxSettings settings = settings(mechanism, customizer);
		return ProcessIsolatedExecutor.isolated(settings, verified(settings));
	}

	/**
	 * Give a working directory's group to the command user of the seccomp mechanism, as
	 * the executor does for each execution, for a test that runs a verified command line
	 * itself (a root JVM's command user there is a uid of the host, which could not
	 * write, or even enter, a directory of mode 0700).
	 * @param mechanism the mechanism whose command line runs in the directory
	 * @param directory the directory
	 * @return what takes the group back when closed (nothing where none was given)
	 * @throws IOException if the group cannot be given
	 */
	public static Closeable forCommandUser(SandboxMechanism mechanism, Path directory) throws IOException {
		if (mechanism instanceof SeccompMechanism seccomp && seccomp.commandGroup() >= 0) {
			return WorkingDirectoryGrant.grant(directory.toRealPath(), seccomp.commandGroup());
		}
		return () -> {
		};
	}

}
