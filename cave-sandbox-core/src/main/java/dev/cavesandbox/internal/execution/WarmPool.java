package dev.cavesandbox.internal.execution;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.cavesandbox.WarmPoolState;
import dev.cavesandbox.internal.workspace.ViewFingerprint;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pool of warm sandboxes ({@code cave.sandbox.warm.size}): one daemon thread
 * ({@value #THREAD}) keeps {@code ready + preparing <= size} sandboxes of the executor's
 * {@link WarmShape}, each for one execution. {@link #take} gives the oldest that is still
 * alive, younger than {@code cave.sandbox.warm.max-age} and whose view has not changed
 * ({@link ViewFingerprint}); one that is not is discarded, and the caller of a miss takes
 * the cold path at once, never waiting for a preparation. The replacement of a sandbox
 * taken is prepared once its execution has ended ({@link #served()}), or
 * {@value #REFILL_DELAY_MILLIS} ms after the take if that comes first: on two cores a
 * preparation beside a short command delays the command (measured with ftrace: the caller
 * of a warm {@code /bin/true} waited about 0.6 ms for the CPU while the replacement was
 * spawned). The thread discards what ages out while it waits. Three failed preparations
 * in a row suspend the pool with an exponential back-off (1 s to 5 min, the reason in
 * {@link #state()}); cold executions carry on. {@link #close()} discards every waiting
 * sandbox.
 */
final class WarmPool implements AutoCloseable {

	static final String THREAD = "cave-sandbox-warm";

	private static final Logger logger = LoggerFactory.getLogger(WarmPool.class);

	/** Failed preparations in a row that suspend the pool. */
	static final int FAILURES_TO_SUSPEND = 3;

	private static final Duration FIRST_BACK_OFF = Duration.ofSeconds(1);

	private static final Duration LAST_BACK_OFF = Duration.ofMinutes(5);

	/** The longest a take defers the preparation of its replacement, in milliseconds. */
	static final long REFILL_DELAY_MILLIS = 50;

	private final int size;

	private final Duration maxAge;

	private final WarmShape shape;

	private final WarmSandboxes sandboxes;

	private final Supplier<ViewFingerprint> fingerprint;

	private final Object lock = new Object();

	private final Deque<WarmLaunch> ready = new ArrayDeque<>();

	private final Thread thread;

	private int preparing;

	/** Whether a take defers preparations, until {@link #deferredUntil}. */
	private boolean deferred;

	private long deferredUntil;

	private boolean closed;

	private long hits;

	private final Map<WarmPoolState.Miss, Long> misses = new EnumMap<>(WarmPoolState.Miss.class);

	private final Map<WarmPoolState.Discard, Long> discards = new EnumMap<>(WarmPoolState.Discard.class);

	private long preparations;

	private long preparationNanos;

	private int failures;

	private long suspendedUntil;

	private @Nullable String suspended;

	/**
	 * Create the pool and start its thread.
	 * @param size the number of sandboxes, at least 1
	 * @param maxAge how long a sandbox may wait
	 * @param shape the shape of every sandbox
	 * @param sandboxes how a sandbox is prepared and discarded
	 * @param fingerprint the fingerprint of the view now
	 */
	WarmPool(int size, Duration maxAge, WarmShape shape, WarmSandboxes sandboxes,
			Supplier<ViewFingerprint> fingerprint) {
		this.size = size;
		this.maxAge = maxAge;
		this.shape = shape;
		this.sandboxes = sandboxes;
		this.fingerprint = fingerprint;
		this.thread = new Thread(this::prepareWhileOpen, THREAD);
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/**
	 * Take a warm sandbox for a request, or count why there is none.
	 * @param request the request merged over the settings
	 * @return the sandbox, the caller's to claim, or {@code null}: take the cold path
	 */
	@Nullable WarmLaunch take(EffectiveRequest request) {
		WarmPoolState.Miss miss = this.shape.miss(request);
		if (miss != null) {
			count(this.misses, miss);
			return null;
		}
		ViewFingerprint now = null;
		while (true) {
			WarmLaunch candidate;
			synchronized (this.lock) {
				candidate = this.ready.pollFirst();
				if (candidate == null) {
					this.misses.merge(WarmPoolState.Miss.EMPTY, 1L, Long::sum);
					return null;
				}
				// Deferred before the thread is woken to compute its wait anew: set after
				// the checks below, the thread could prepare the replacement at once.
				this.deferred = true;
				this.deferredUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REFILL_DELAY_MILLIS);
				this.lock.notifyAll();
			}
			WarmPoolState.Discard unfit = null;
			if (!candidate.process().isAlive()) {
				unfit = WarmPoolState.Discard.DIED;
			}
			else if (aged(candidate, System.nanoTime())) {
				unfit = WarmPoolState.Discard.AGE;
			}
			else {
				now = (now != null) ? now : this.fingerprint.get();
				unfit = now.equals(candidate.fingerprint()) ? null : WarmPoolState.Discard.VIEW_CHANGED;
			}
			if (unfit == null) {
				synchronized (this.lock) {
					this.hits++;
				}
				return candidate;
			}
			// Not served: its replacement is prepared now.
			served();
			discard(candidate, unfit);
		}
	}

	/**
	 * Say that an execution of a sandbox from {@link #take} has ended: its replacement is
	 * prepared now.
	 */
	void served() {
		synchronized (this.lock) {
			this.deferred = false;
			this.lock.notifyAll();
		}
	}

	private boolean aged(WarmLaunch launch, long now) {
		return now - launch.preparedAt() >= this.maxAge.toNanos();
	}

	/**
	 * Return a snapshot of the pool.
	 * @return the state
	 */
	WarmPoolState state() {
		synchronized (this.lock) {
			return new WarmPoolState(this.size, this.ready.size(), this.preparing, this.hits, this.misses,
					this.discards, this.preparations, Duration.ofNanos(this.preparationNanos), this.suspended);
		}
	}

	/**
	 * The thread: discard what aged out, else prepare while there is room and the pool is
	 * not suspended, else wait until something changes or the oldest ages out.
	 */
	private void prepareWhileOpen() {
		while (true) {
			List<WarmLaunch> aged = new ArrayList<>();
			synchronized (this.lock) {
				if (this.closed) {
					return;
				}
				long now = System.nanoTime();
				while (!this.ready.isEmpty() && aged(this.ready.peekFirst(), now)) {
					aged.add(this.ready.pollFirst());
				}
				if (aged.isEmpty()) {
					long wait = waitNanos(now);
					if (wait > 0) {
						try {
							this.lock.wait(Math.max(1, wait / 1_000_000));
						}
						catch (InterruptedException ex) {
							return;
						}
						continue;
					}
					this.preparing++;
				}
			}
			if (!aged.isEmpty()) {
				aged.forEach((launch) -> discard(launch, WarmPoolState.Discard.AGE));
				continue;
			}
			prepareOne();
		}
	}

	/** How long to wait before the next step; 0: prepare now (room, not suspended). */
	private long waitNanos(long now) {
		long untilAged = this.ready.isEmpty() ? Long.MAX_VALUE
				: this.ready.peekFirst().preparedAt() + this.maxAge.toNanos() - now;
		if (this.suspended != null && now < this.suspendedUntil) {
			return Math.min(untilAged, this.suspendedUntil - now);
		}
		if (this.ready.size() + this.preparing < this.size) {
			long untilUndeferred = this.deferred ? this.deferredUntil - now : 0;
			return (untilUndeferred > 0) ? Math.min(untilAged, untilUndeferred) : 0;
		}
		return (untilAged == Long.MAX_VALUE) ? Duration.ofMinutes(1).toNanos() : Math.max(1, untilAged);
	}

	private void prepareOne() {
		long start = System.nanoTime();
		WarmLaunch prepared = null;
		Exception failure = null;
		try {
			prepared = this.sandboxes.prepare();
		}
		catch (Exception ex) {
			failure = ex;
		}
		boolean late;
		synchronized (this.lock) {
			this.preparing--;
			this.preparations++;
			this.preparationNanos += System.nanoTime() - start;
			late = this.closed;
			if (prepared != null && !late) {
				this.ready.addLast(prepared);
				this.failures = 0;
				this.suspended = null;
			}
			else if (failure != null) {
				fail(failure);
			}
			this.lock.notifyAll();
		}
		if (prepared != null && late) {
			discard(prepared, WarmPoolState.Discard.CLOSED);
		}
		if (failure instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
	}

	/** Count a failed preparation; the third in a row and each after it suspend. */
	private void fail(Exception failure) {
		if (failure instanceof WarmSandboxes.NotReadyException) {
			count(this.discards, WarmPoolState.Discard.NOT_READY);
		}
		this.failures++;
		String message = String.valueOf(failure.getMessage());
		if (this.closed) {
			return;
		}
		logger.warn("a warm sandbox could not be prepared ({} in a row): {}", this.failures, message);
		if (this.failures >= FAILURES_TO_SUSPEND) {
			int doublings = Math.min(this.failures - FAILURES_TO_SUSPEND, 20);
			Duration backOff = FIRST_BACK_OFF.multipliedBy(1L << doublings);
			backOff = (backOff.compareTo(LAST_BACK_OFF) > 0) ? LAST_BACK_OFF : backOff;
			this.suspendedUntil = System.nanoTime() + backOff.toNanos();
			this.suspended = this.failures + " preparations in a row failed, the last: " + message
					+ "; executions take the cold path, the next attempt in " + backOff.toSeconds() + " s";
		}
	}

	private void discard(WarmLaunch launch, WarmPoolState.Discard reason) {
		count(this.discards, reason);
		try {
			this.sandboxes.discard(launch);
		}
		catch (RuntimeException ex) {
			logger.warn("a warm sandbox could not be discarded completely: {}", ex.toString());
		}
	}

	private <K extends Enum<K>> void count(Map<K, Long> counts, K key) {
		synchronized (this.lock) {
			counts.merge(key, 1L, Long::sum);
		}
	}

	/**
	 * Stop preparing and handing out sandboxes, and leave the waiting ones to
	 * {@link #close()}: the executor's close kills them with its running trees, all at
	 * once ({@code ProcessRunner.close()}), rather than one after the other before those.
	 */
	void stop() {
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			this.lock.notifyAll();
		}
		this.thread.interrupt();
	}

	/**
	 * Stop preparing and discard every waiting sandbox; a preparation under way is
	 * discarded when it ends (the runner's close kills its process meanwhile).
	 */
	@Override
	public void close() {
		stop();
		List<WarmLaunch> waiting;
		synchronized (this.lock) {
			waiting = new ArrayList<>(this.ready);
			this.ready.clear();
		}
		waiting.forEach((launch) -> discard(launch, WarmPoolState.Discard.CLOSED));
	}

	/**
	 * Wait a bounded time for the thread to end (after the runner's close ended what it
	 * was preparing).
	 * @param patience how long
	 */
	void awaitEnd(Duration patience) {
		try {
			this.thread.join(Math.max(1, patience.toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
