package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;

import dev.cavesandbox.internal.workspace.DirectoryTrees;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Red team of issue 28's last changes: names that the probe creates beside its working
 * directory in a shared work directory, where another local user sees the working
 * directory's name appear and can put a link under the sibling's name first.
 */
@EnabledOnOs(OS.LINUX)
class Issue28FinalBreakInTests {

	private static final int FILES = 2000;

	/**
	 * The deletion of a tree another user can write (a command user's working or
	 * shared-memory directory, which the orphan sweep, the executor and the probe delete
	 * as root): the user waits until the deletion has listed a subdirectory and begun
	 * unlinking in it, then renames it away and puts a link to a root directory under its
	 * name. The deletion must unlink nothing of the link's target. Seen by hand: 837 of
	 * 2000 root 0600 files of a root 0700 directory deleted.
	 */
	@Test

	void aSubdirectorySwappedForALinkDuringADeletionDoesNotDeleteTheLinksTarget(@TempDir Path base) throws Exception {
		assumeThat(System.getProperty("user.name")).as("the JVM runs as root").isEqualTo("root");
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path tree = Files.createDirectory(base.resolve("tree"));
		Path swapped = Files.createDirectory(tree.resolve("a"));
		Path vault = Files.createDirectory(base.resolve("vault"),
				PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
		for (int i = 0; i < FILES; i++) {
			Files.writeString(swapped.resolve("f" + i), "command's");
			Files.writeString(vault.resolve("f" + i), "root's");
		}
		for (Path path : List.of(tree, swapped)) {
			Files.setAttribute(path, "unix:uid", 65534);
			Files.setAttribute(path, "unix:gid", 65534);
		}
		String swap = "import os, time\n" + "end = time.time() + 60\n"
				+ "while time.time() < end and os.path.exists('a/f0'): pass\n" + "os.rename('a', 'b'); os.symlink('"
				+ vault + "', 'a'); print('swapped')\n";
		Process nobody = new ProcessBuilder("/usr/bin/timeout", "90", "/usr/bin/setpriv", "--reuid=65534",
				"--regid=65534", "--clear-groups", "--", "/usr/bin/python3", "-c", swap)
			.directory(tree.toFile())
			.redirectErrorStream(true)
			.redirectOutput(base.resolve("swapper.out").toFile())
			.start();
		Thread.sleep(500); // its loop running
		DirectoryTrees.delete(tree);
		nobody.destroy();
		nobody.waitFor();
		String output = Files.readString(base.resolve("swapper.out"));
		try (Stream<Path> left = Files.list(vault)) {
			assertThat(left.count()).as("swapper: %s", output).isEqualTo(FILES);
		}
	}

	/**
	 * Another user watches a sticky, world-writable work directory ({@code /tmp}) and
	 * puts a link named like the probe's planted file ({@code <probe dir>.planted}) to a
	 * root file as soon as the probe's directory appears; with
	 * {@code fs.protected_symlinks=0} a root JVM follows it. The probe must neither write
	 * nor chmod the link's target. Seen by hand with a C inotify watcher as uid 65534
	 * against the sample CLI: the target became {@code cave-sandbox-probe}, mode 0644, in
	 * three runs of four.
	 */
	@Test
	void aLinkPlantedUnderTheProbesSiblingNameIsNotFollowed(@TempDir Path base) throws Exception {
		Path work = Files.createDirectory(base.resolve("work"));
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Files.setAttribute(work, "unix:mode", 01777);
		Path vault = Files.createDirectory(base.resolve("vault"),
				PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
		Path target = Files.writeString(vault.resolve("secret"), "original");
		Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-------"));
		Path tools = Files.createDirectory(base.resolve("tools"));
		Path planter = CompiledPrograms.compile("probe-sibling-planter", tools);
		Files.setPosixFilePermissions(tools, PosixFilePermissions.fromString("rwxr-xr-x"));
		Process nobody = new ProcessBuilder("/usr/bin/timeout", "120", "/usr/bin/setpriv", "--reuid=65534",
				"--regid=65534", "--clear-groups", "--", planter.toString(), work.toString(), target.toString(),
				".planted", "100")
			.redirectErrorStream(true)
			.redirectOutput(base.resolve("planter.out").toFile())
			.start();
		try {
			Thread.sleep(500); // its watch in place
			for (int run = 0; run < 5 && Files.readString(target).equals("original"); run++) {
				new NetworkIsolationProbe(
						SandboxSettings.builder().mechanism(MechanismChoice.NAMESPACES).workDirectory(work).build())
					.probe();
			}
		}
		finally {
			nobody.destroy();
			nobody.waitFor();
		}
		assertThat(target).as("planter: %s", Files.readString(base.resolve("planter.out"))).hasContent("original");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rw-------");
	}

	/**
	 * Two findings of the red team, closed: another user of a sticky, world-writable work
	 * directory ({@code /tmp}), here uid and gid 65534 ({@code nobody}, {@code nogroup}),
	 * watches the probe's directories appear and, as fast as it can, takes the names the
	 * probe used to create beside them ({@code .shm}, {@code .outside}, {@code .planted}:
	 * the probe failed, or a write outside that the sandbox let through looked refused)
	 * and puts entries into them and into the working directory (on {@code seccomp} with
	 * a root JVM they were group 65534's and group-writable while the probe ran). Now the
	 * probe keeps them in a directory of its own that no other user enters: every probe
	 * verifies the mechanism, and nothing gets in.
	 */
	@Test
	void anotherUserOfTheWorkDirectoryNeitherTakesTheProbesNamesNorPutsEntriesInItsDirectories(@TempDir Path base)
			throws Exception {
		assumeThat(System.getProperty("user.name")).as("the JVM runs as root").isEqualTo("root");
		Path work = Files.createDirectory(base.resolve("work"));
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Files.setAttribute(work, "unix:mode", 01777);
		Path stop = base.resolve("stop");
		String watcher = "import os, sys, time\n" + "work, stop = sys.argv[1], sys.argv[2]\n"
				+ "end, seen, inside = time.time() + 120, set(), []\n"
				+ "while time.time() < end and not os.path.exists(stop):\n" + "    for name in os.listdir(work):\n"
				+ "        if not name.startswith('cave-sandbox-probe-') or '.' in name: continue\n"
				+ "        seen.add(name)\n" + "        for suffix in ('.shm', '.outside', '.planted'):\n"
				+ "            try: os.mkdir(os.path.join(work, name + suffix))\n"
				+ "            except OSError: pass\n" + "        for sub in ('', 'work', 'work.shm'):\n"
				+ "            try: open(os.path.join(work, name, sub, 'nobodys'), 'x').close(); inside.append(name + '/' + sub)\n"
				+ "            except OSError: pass\n" + "print('seen', len(seen)); print('inside', inside)\n";
		Process nobody = new ProcessBuilder("/usr/bin/timeout", "150", "/usr/bin/setpriv", "--reuid=65534",
				"--regid=65534", "--clear-groups", "--", "/usr/bin/python3", "-c", watcher, work.toString(),
				stop.toString())
			.redirectErrorStream(true)
			.redirectOutput(base.resolve("watcher.out").toFile())
			.start();
		List<IsolationCapability> verdicts = new java.util.ArrayList<>();
		try {
			Thread.sleep(500); // its loop running
			for (int run = 0; run < 4; run++) {
				verdicts.add(new NetworkIsolationProbe(
						SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).workDirectory(work).build())
					.probe());
			}
		}
		finally {
			Files.writeString(stop, "");
			nobody.waitFor();
		}
		String output = Files.readString(base.resolve("watcher.out"));
		assertThat(output).as("the watcher saw the probe's directories").containsPattern("seen [1-9]");
		assertThat(output).contains("inside []");
		assertThat(verdicts).as(output)
			.allSatisfy((verdict) -> assertThat(verdict.available()).as("%s", verdict).isTrue());
	}

}
