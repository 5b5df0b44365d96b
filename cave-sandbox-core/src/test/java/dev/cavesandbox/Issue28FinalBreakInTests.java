package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Red team of issue 28's last changes: names that the probe creates beside its working
 * directory in a shared work directory, where another local user sees the working
 * directory's name appear and can put a link under the sibling's name first.
 */
@EnabledOnOs(OS.LINUX)
class Issue28FinalBreakInTests {

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

}
