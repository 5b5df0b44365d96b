package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.probe.HostFacts;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ViewVerdict}: how the probe judges what its child saw of the
 * filesystem view, from the child's facts alone. The real children are in the probe's own
 * tests.
 */
class ViewVerdictTests {

	private static final String LEFT_OUT = "readable path /srv/missing left out: it does not exist or cannot be "
			+ "resolved (NoSuchFileException)";

	private static final FilesystemView SYSTEM = new FilesystemView(FilesystemView.Kind.SYSTEM,
			List.of(Path.of("/tmp")), true, List.of(Path.of("/usr"), Path.of("/etc")),
			Map.of(Path.of("/bin"), Path.of("usr/bin")), List.of(Path.of("/etc/shadow")),
			List.of(Path.of("/etc/ssl/private")), List.of(Path.of("/srv/data")), List.of(Path.of("/opt/out")));

	private static final String EXACT_ROOT = "bin dev etc opt proc srv tmp usr";

	/**
	 * A host view needs no report of the child: the fact names the view, its property and
	 * the listed paths; the settings' left-out paths are facts too.
	 */
	@Test
	void hostViewPassesWithItsFact() {
		FilesystemView host = new FilesystemView(FilesystemView.Kind.HOST, List.of(Path.of("/tmp")), true, List.of(),
				Map.of(), List.of(), List.of(), List.of(Path.of("/srv/data")), List.of());
		List<String> verified = new ArrayList<>();
		assertThat(ViewVerdict.check(Map.of(), facts(host), true, verified)).isNull();
		assertThat(verified).containsExactly(LEFT_OUT,
				"filesystem view: host (cave.sandbox.filesystem.view=host): every file the command's user can read, "
						+ "except in the hidden directories; readable: /srv/data");
	}

	/**
	 * On a mechanism with a mount namespace, a root that lists exactly the view's names
	 * passes, with a fact that names them, the system directories, the masks and the
	 * listed paths.
	 */
	@Test
	void mountNamespaceWithExactlyTheViewsNamesAtTheRootPasses() {
		List<String> verified = new ArrayList<>();
		assertThat(ViewVerdict.check(report(EXACT_ROOT), facts(SYSTEM), true, verified)).isNull();
		assertThat(verified).containsExactly(LEFT_OUT,
				"filesystem view: system: the root holds only /bin, /dev, /etc, /opt, /proc, /srv, /tmp, /usr; "
						+ "read-only /usr, /etc (masked: /etc/shadow, /etc/ssl/private); readable: /srv/data; "
						+ "writable: /opt/out; nothing else of the host exists inside (a file planted beside the "
						+ "working directory is unreadable)");
	}

	/**
	 * The names a system view has at its root: its directories, links and listed paths.
	 */
	@Test
	void namesAtTheRootAreThoseOfTheViewsPaths() {
		assertThat(ViewVerdict.expectedAtRoot(SYSTEM)).containsExactly("dev", "proc", "usr", "etc", "bin", "tmp", "srv",
				"opt");
	}

	/**
	 * A root that lists more than the view's names fails naming each extra one and what
	 * was expected; nothing is verified of the view.
	 */
	@Test
	void mountNamespaceWithMoreAtTheRootFailsNamingThem() {
		List<String> verified = new ArrayList<>();
		assertThat(
				ViewVerdict.check(report("bin dev etc home opt proc root srv tmp usr"), facts(SYSTEM), true, verified))
			.isEqualTo("the child sees /home, /root at the root, outside the system view (expected only /dev, /proc, "
					+ "/usr, /etc, /bin, /tmp, /srv, /opt)");
		assertThat(verified).noneMatch((fact) -> fact.startsWith("filesystem view"));
	}

	/**
	 * On a mechanism with a mount namespace the root must be listed: a refusal or no
	 * report fails.
	 */
	@Test
	void mountNamespaceWithoutARootListFails() {
		assertThat(ViewVerdict.check(report("refused"), facts(SYSTEM), true, new ArrayList<>()))
			.isEqualTo("the child could not list / in the system view (rootlist=refused)");
		Map<String, List<String>> facts = report(EXACT_ROOT);
		facts.remove("rootlist");
		assertThat(ViewVerdict.check(facts, facts(SYSTEM), true, new ArrayList<>()))
			.isEqualTo("the child could not list / in the system view (rootlist=(no report))");
	}

	/**
	 * Without a mount namespace (Landlock) a listed root fails: Landlock should refuse
	 * listing it.
	 */
	@Test
	void landlockWithAListedRootFails() {
		assertThat(ViewVerdict.check(report(EXACT_ROOT), facts(SYSTEM), false, new ArrayList<>()))
			.isEqualTo("the child could list / in the system view (Landlock should refuse it): " + EXACT_ROOT);
	}

	/**
	 * Without a mount namespace a refused root listing passes, with the fact of what
	 * Landlock refuses and a fact that what stat(2) shows is not given.
	 */
	@Test
	void landlockWithARefusedRootPassesAndSaysWhatIsNotGiven() {
		List<String> verified = new ArrayList<>();
		assertThat(ViewVerdict.check(report("refused"), facts(SYSTEM), false, verified)).isNull();
		assertThat(verified).containsExactly(LEFT_OUT,
				"filesystem view: system, by Landlock: reading, listing and executing refused outside /usr, /etc "
						+ "(masked: /etc/shadow, /etc/ssl/private), the working directory, /proc, /sys/fs/cgroup and "
						+ "the usual /dev files; readable: /srv/data; writable: /opt/out (a file planted beside the "
						+ "working directory is unreadable)",
				LinuxProbe.NOT_GIVEN + "hiding the names outside the system view: Landlock refuses reading them, not "
						+ "stat(2) (names, sizes and times stay visible)");
	}

	/** A child that could read the file planted beside its working directory fails. */
	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void plantedFileThatIsReadableFails(boolean mountNamespace) {
		Map<String, List<String>> facts = report(mountNamespace ? EXACT_ROOT : "refused");
		facts.put("planted", List.of("readable"));
		assertThat(ViewVerdict.check(facts, facts(SYSTEM), mountNamespace, new ArrayList<>()))
			.isEqualTo("the child could read a file outside the system view (a file of everyone's the probe planted "
					+ "beside its working directory: planted=readable)");
	}

	/**
	 * A child that could read {@code /etc/shadow} fails; one where it is absent passes.
	 */
	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void shadowThatIsReadableFails(boolean mountNamespace) {
		Map<String, List<String>> facts = report(mountNamespace ? EXACT_ROOT : "refused");
		facts.put("shadow", List.of("readable"));
		assertThat(ViewVerdict.check(facts, facts(SYSTEM), mountNamespace, new ArrayList<>()))
			.isEqualTo("the child could read /etc/shadow in the system view (shadow=readable)");
		facts.put("shadow", List.of("absent"));
		assertThat(ViewVerdict.check(facts, facts(SYSTEM), mountNamespace, new ArrayList<>())).isNull();
	}

	/**
	 * A missing report is never a pass: without the planted file's, {@code /etc/shadow}'s
	 * or the root's line (Landlock), the check fails and says there was no report.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "planted", "shadow", "rootlist" })
	void missingReportFails(String key) {
		for (boolean mountNamespace : new boolean[] { true, false }) {
			Map<String, List<String>> facts = report(mountNamespace ? EXACT_ROOT : "refused");
			facts.remove(key);
			assertThat(ViewVerdict.check(facts, facts(SYSTEM), mountNamespace, new ArrayList<>()))
				.as("without %s, mount namespace %s", key, mountNamespace)
				.contains(key + "=(no report)");
			facts.put(key, List.of());
			assertThat(ViewVerdict.check(facts, facts(SYSTEM), mountNamespace, new ArrayList<>()))
				.as("with an empty %s, mount namespace %s", key, mountNamespace)
				.contains(key + "=(no report)");
		}
	}

	private static Map<String, List<String>> report(String rootList) {
		Map<String, List<String>> facts = new HashMap<>();
		facts.put("rootlist", List.of(rootList));
		facts.put("planted", List.of("refused"));
		facts.put("shadow", List.of("refused"));
		return facts;
	}

	private static HostFacts facts(FilesystemView view) {
		return new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000, view, Map.of(Path.of("/tmp"), 42L), Map.of(),
				List.of(LEFT_OUT));
	}

}
