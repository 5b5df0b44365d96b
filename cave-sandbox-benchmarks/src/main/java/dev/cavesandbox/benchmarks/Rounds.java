package dev.cavesandbox.benchmarks;

import java.util.Arrays;

/**
 * The statistics of the benchmarks that time their variants side by side in rounds: the
 * median of one variant's times, and the median of each round's ratio of two variants, so
 * that a change of load weighs on both sides of a ratio alike.
 */
final class Rounds {

	private Rounds() {
	}

	/**
	 * Return the median of the times.
	 * @param values one time per round
	 * @return the median (the upper one of an even count)
	 */
	static double median(long[] values) {
		long[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2];
	}

	/**
	 * Return the median of each round's ratio.
	 * @param numerators one time per round
	 * @param denominators one time per round, in the same order
	 * @return the median ratio
	 */
	static double medianRatio(long[] numerators, long[] denominators) {
		double[] ratios = new double[numerators.length];
		for (int i = 0; i < ratios.length; i++) {
			ratios[i] = (double) numerators[i] / denominators[i];
		}
		Arrays.sort(ratios);
		return ratios[ratios.length / 2];
	}

}
