package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.SandboxSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link HostFacts}.
 */
class HostFactsTests {

	/**
	 * The JVM's finite hard limits are read from a {@code /proc/PID/limits} file (its
	 * format: fixed columns, names of one or more words, "unlimited" for none).
	 */
	@Test
	void finiteHardLimitsAreReadByTheirNames(@TempDir Path directory) throws IOException {
		Path limits = Files.writeString(directory.resolve("limits"), """
				Limit                     Soft Limit           Hard Limit           Units
				Max cpu time              unlimited            unlimited            seconds
				Max file size             unlimited            unlimited            bytes
				Max data size             unlimited            unlimited            bytes
				Max core file size        0                    unlimited            bytes
				Max processes             96365                300                  processes
				Max open files            1024                 1048576              files
				Max pending signals       96365                96365                signals
				""");
		assertThat(HostFacts.hardLimits(limits)).containsExactly(Map.entry("processes", 300L),
				Map.entry("open files", 1048576L), Map.entry("pending signals", 96365L));
	}

	/** This JVM's own file is read: a JVM always has a finite hard open files limit. */
	@Test
	void theJvmsOwnHardLimitsAreRead() {
		assertThat(HostFacts.current(SandboxSettings.defaults(), List.of()).hardLimits()).containsKey("open files");
	}

	@Test
	void anUnreadableFileGivesNoLimits(@TempDir Path directory) {
		assertThat(HostFacts.hardLimits(directory.resolve("missing"))).isEmpty();
	}

}
