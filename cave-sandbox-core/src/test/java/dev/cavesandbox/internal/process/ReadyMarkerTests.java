package dev.cavesandbox.internal.process;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's ready and started markers, read ahead or dropped from the front of
 * stdout, and whether the command was started.
 */
class ReadyMarkerTests {

	@Test
	void awaitReadsExactlyTheMarker() throws IOException {
		InputStream stdout = stream("CAVE-RDYoutput");
		assertThat(ReadyMarker.await(stdout)).isTrue();
		assertThat(text(stdout)).isEqualTo("output");
	}

	@Test
	void awaitAtAnEarlyEndOrOtherBytesIsFalse() throws IOException {
		assertThat(ReadyMarker.await(stream("CAVE"))).isFalse();
		assertThat(ReadyMarker.await(stream("CAVE-RDZ"))).isFalse();
	}

	@Test
	void droppedTakesBothMarkersOffTheFrontAndTellsTheCommandStarted() throws IOException {
		ReadyMarker.Output output = ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUNhello CAVE-RDY CAVE-RUN"), false);
		assertThat(output.started()).as("before the first read").isFalse();
		assertThat(text(output)).isEqualTo("hello CAVE-RDY CAVE-RUN");
		assertThat(output.started()).isTrue();
	}

	@Test
	void availableBeforeTheFirstReadCountsNoMarkerByte() throws IOException {
		assertThat(ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUNhello"), false).available()).isEqualTo(5);
		assertThat(ReadyMarker.dropped(stream("CAVE-RUNhello"), true).available()).isEqualTo(5);
		assertThat(ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUN"), false).available()).isZero();
		assertThat(ReadyMarker.dropped(stream("short"), false).available()).as("an underestimate, never more").isZero();
	}

	@Test
	void droppedAfterAwaitTakesTheStartedMarkerOnly() throws IOException {
		InputStream stdout = stream("CAVE-RDYCAVE-RUNhello");
		assertThat(ReadyMarker.await(stdout)).isTrue();
		ReadyMarker.Output output = ReadyMarker.dropped(stdout, true);
		assertThat(text(output)).isEqualTo("hello");
		assertThat(output.started()).isTrue();
	}

	@Test
	void commandWhoseOutputBeginsWithTheStartedMarkerKeepsIt() throws IOException {
		ReadyMarker.Output cold = ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUNCAVE-RUNmine"), false);
		assertThat(text(cold)).isEqualTo("CAVE-RUNmine");
		assertThat(cold.started()).isTrue();
		ReadyMarker.Output warm = ReadyMarker.dropped(stream("CAVE-RUNCAVE-RDYCAVE-RUN"), true);
		assertThat(text(warm)).isEqualTo("CAVE-RDYCAVE-RUN");
		assertThat(warm.started()).isTrue();
	}

	@Test
	void launcherThatEndedBeforeTheStartedMarkerDidNotStartTheCommand() throws IOException {
		for (String stdout : new String[] { "", "CAVE", "CAVE-RDY", "CAVE-RDYCAVE-R" }) {
			ReadyMarker.Output output = ReadyMarker.dropped(stream(stdout), false);
			assertThat(text(output)).as(stdout).isEqualTo(stdout.startsWith("CAVE-RDY") ? stdout.substring(8) : stdout);
			assertThat(output.started()).as(stdout).isFalse();
		}
		ReadyMarker.Output warm = ReadyMarker.dropped(stream(""), true);
		assertThat(text(warm)).isEmpty();
		assertThat(warm.started()).isFalse();
	}

	@Test
	void droppedKeepsWhatIsNotTheReadyMarker() throws IOException {
		ReadyMarker.Output output = ReadyMarker.dropped(stream("something else CAVE-RDYCAVE-RUN"), false);
		assertThat(text(output)).isEqualTo("something else CAVE-RDYCAVE-RUN");
		assertThat(output.started()).isFalse();
	}

	@Test
	void droppedGivesSingleBytesToo() throws IOException {
		InputStream stream = ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUNab"), false);
		assertThat(stream.read()).isEqualTo('a');
		assertThat(stream.read()).isEqualTo('b');
		assertThat(stream.read()).isEqualTo(-1);
	}

	@Test
	void neverStartedAtTheEndReadsTheMarkersTheCallerHasNotReadAndKeepsTheCommandsBytes() throws IOException {
		ReadyMarker.Output started = ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUNout"), false);
		assertThat(started.neverStarted()).isFalse();
		assertThat(text(started)).isEqualTo("out");
		ReadyMarker.Output other = ReadyMarker.dropped(stream("CAVE-RDYsomething"), false);
		assertThat(other.neverStarted()).isTrue();
		assertThat(text(other)).isEqualTo("something");
		ReadyMarker.Output warm = ReadyMarker.dropped(stream("CAVE-RUNout"), true);
		assertThat(warm.neverStarted()).isFalse();
		assertThat(text(warm)).isEqualTo("out");
	}

	@Test
	void neverStartedWhereFewerBytesThanTheMarkersCameReadsNothing() throws IOException {
		for (String stdout : new String[] { "", "CAVE-R", "CAVE-RDY", "CAVE-RDYCAVE-RU" }) {
			ReadyMarker.Output output = ReadyMarker.dropped(stream(stdout), false);
			assertThat(output.neverStarted()).as(stdout).isTrue();
			assertThat(text(output)).as(stdout).isEqualTo(stdout.startsWith("CAVE-RDY") ? stdout.substring(8) : stdout);
		}
		assertThat(ReadyMarker.dropped(stream(""), true).neverStarted()).isTrue();
	}

	@Test
	void neverStartedAfterTheCallerReadTheMarkersIsWhatTheySaid() throws IOException {
		ReadyMarker.Output started = ReadyMarker.dropped(stream("CAVE-RDYCAVE-RUN"), false);
		assertThat(text(started)).isEmpty();
		assertThat(started.neverStarted()).isFalse();
		ReadyMarker.Output failed = ReadyMarker.dropped(stream("CAVE-RDYcannot set up\n"), false);
		assertThat(text(failed)).isEqualTo("cannot set up\n");
		assertThat(failed.neverStarted()).isTrue();
	}

	@Test
	void neverStartedOfAStreamTheCallerClosedUnreadClaimsNothing() throws IOException {
		ReadyMarker.Output output = ReadyMarker.dropped(new BufferedInputStream(stream("")), false);
		output.close();
		assertThat(output.neverStarted()).isFalse();
	}

	@Test
	void neverStartedWhileTheCallerIsBlockedReadingTheMarkersClaimsNothingAndReturns() throws Exception {
		PipedOutputStream launcher = new PipedOutputStream();
		ReadyMarker.Output output = ReadyMarker.dropped(new PipedInputStream(launcher), false);
		Thread caller = new Thread(() -> {
			try {
				output.readAllBytes();
			}
			catch (IOException ex) {
				// the pipe's end
			}
		});
		caller.start();
		await().until(() -> caller.getState() == Thread.State.TIMED_WAITING);
		assertThat(output.neverStarted()).isFalse();
		launcher.write(bytes("CAVE-RDYCAVE-RUN"));
		launcher.close();
		caller.join();
		assertThat(output.started()).isTrue();
	}

	@Test
	void removedFromALineTakesBothMarkersAfterTheChecksLines() {
		assertThat(text(ReadyMarker.removedFromALine(bytes("landlock=6\nCAVE-RDYCAVE-RUNCAVE-RUNdir=1:2\n"))))
			.isEqualTo("landlock=6\nCAVE-RUNdir=1:2\n");
		assertThat(text(ReadyMarker.removedFromALine(bytes("landlock=6\nCAVE-RDY")))).isEqualTo("landlock=6\n");
		byte[] unmarked = bytes("landlock=6 CAVE-RDYCAVE-RUN\n");
		assertThat(ReadyMarker.removedFromALine(unmarked)).isSameAs(unmarked);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	private static InputStream stream(String text) {
		return new ByteArrayInputStream(bytes(text));
	}

	private static String text(InputStream stream) throws IOException {
		return new String(stream.readAllBytes(), StandardCharsets.US_ASCII);
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.US_ASCII);
	}

}
