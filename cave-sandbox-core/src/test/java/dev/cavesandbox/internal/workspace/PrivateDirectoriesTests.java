package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionCancelledException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Private working directories: reuse of emptied ones, renewed by the cleaner, and
 * deletion of the others.
 */
@EnabledOnOs(OS.LINUX)
public class PrivateDirectoriesTests {

	@TempDir
	Path workDirectory;

	@Test
	void emptiedDirectoryIsReusedOwnerOnlyWhenReuseIsOn() throws IOException {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, true);
		Path first = directories.create();
		Files.writeString(first.resolve("left"), "x");
		Files.setPosixFilePermissions(first, PosixFilePermissions.fromString("rwxrwxrwx"));
		directories.release(first);
		List<Path> others = new ArrayList<>();
		Path second = createUntil(directories, first, others);
		assertThat(second).isEmptyDirectory();
		assertThat(Files.getPosixFilePermissions(second)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
		directories.close();
		directories.release(second);
		assertThat(second).doesNotExist();
		others.forEach(directories::release);
		assertThat(others).allSatisfy((other) -> assertThat(other).doesNotExist());
	}

	/**
	 * The cleaner renews a released directory in the background: until it is done, the
	 * directory is not handed out again, however often a new one is asked for.
	 */
	@Test
	void releasedDirectoryIsNotReusedBeforeItIsRenewed() throws IOException {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, true);
		Path first = directories.create();
		for (int i = 0; i < 20; i++) {
			Path sub = Files.createDirectory(first.resolve("d" + i));
			for (int j = 0; j < 100; j++) {
				Files.writeString(sub.resolve("f" + j), "x");
			}
		}
		directories.release(first);
		List<Path> others = new ArrayList<>();
		Path again = createUntil(directories, first, others);
		assertThat(again).isEmptyDirectory();
		directories.release(again);
		others.forEach(directories::release);
		directories.close();
		assertThat(PrivateHome.of(this.workDirectory)).isEmptyDirectory();
	}

	/**
	 * Many threads release directories with something in them at once; closing right
	 * after waits for the cleaner and leaves nothing: no directory, and (with none left)
	 * no lock file.
	 */
	@Test
	void closeLeavesNoDirectoryBehindAfterManyConcurrentReleases() throws Exception {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 4, true);
		ExecutorService releasers = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				done.add(releasers.submit(() -> {
					for (int i = 0; i < 50; i++) {
						Path directory = directories.create();
						Files.writeString(Files.createDirectory(directory.resolve("sub")).resolve("f"), "x");
						directories.release(directory);
					}
					return null;
				}));
			}
			for (Future<?> each : done) {
				each.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			releasers.shutdownNow();
		}
		directories.close();
		assertThat(PrivateHome.of(this.workDirectory)).isEmptyDirectory();
	}

	/**
	 * With the cleaner's queue full, releasing threads renew directories themselves,
	 * beside the cleaner: together they keep no more than {@code maxKept}.
	 */
	@Test
	void concurrentReleasesKeepAtMostMaxKeptDirectories() throws Exception {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 2, true);
		List<Path> created = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			created.add(directories.create());
		}
		ExecutorService releasers = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				List<Path> share = created.subList(t * 50, (t + 1) * 50);
				done.add(releasers.submit(() -> share.forEach(directories::release)));
			}
			for (Future<?> each : done) {
				each.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			releasers.shutdownNow();
		}
		CountDownLatch cleanerThrough = new CountDownLatch(1);
		await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
			directories.runOnCleaner(cleanerThrough::countDown);
			return true;
		});
		assertThat(cleanerThrough.await(60, TimeUnit.SECONDS)).isTrue();
		try (var kept = Files.list(PrivateHome.of(this.workDirectory)).filter(Files::isDirectory)) {
			assertThat(kept.toList()).hasSizeBetween(1, 2);
		}
		directories.close();
	}

	@Test
	void directoryIsDeletedWhenReuseIsOff() {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, false);
		Path directory = directories.create();
		directories.release(directory);
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(directory).doesNotExist());
		directories.close();
	}

	@Test
	void closeDeletesADirectoryReleasedWhenReuseIsOff() throws IOException {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, false);
		Path directory = directories.create();
		Files.writeString(directory.resolve("left"), "x");
		directories.release(directory);
		directories.close();
		assertThat(PrivateHome.of(this.workDirectory)).isEmptyDirectory();
	}

	/**
	 * Create directories until the given one comes back (the cleaner renews it in the
	 * background), collecting the others.
	 */
	private static Path createUntil(PrivateDirectories directories, Path wanted, List<Path> others) {
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(() -> {
			Path created = directories.create();
			if (created.equals(wanted)) {
				return true;
			}
			others.add(created);
			return false;
		});
		return wanted;
	}

	@Test
	void closedDirectoriesCreateNoMore() {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, false);
		directories.close();
		assertThatExceptionOfType(ExecutionCancelledException.class).isThrownBy(directories::create);
	}

}
