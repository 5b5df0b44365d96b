#!/usr/bin/env bash
# Builds and runs every benchmark of BENCHMARKS.md in one go (about 8 minutes on 2 cores) and
# writes the Markdown summary to cave-sandbox-benchmarks/target/benchmark-summary.md.
#   cave-sandbox-benchmarks/run.sh            the full set
#   cave-sandbox-benchmarks/run.sh --quick    a short smoke run (not for figures)
# bubblewrap is measured where /usr/bin/bwrap is installed (apt-get install -y bubblewrap).
# Not in this set, run alone on a quiet machine (see each class's Javadoc): LadderBenchmark,
# WarmPoolBenchmark (the pool of warm sandboxes by size, 1 and 8 callers), and PeersBenchmark, the executor against other sandboxes, whose peers are installed by
#   apt-get install -y bubblewrap firejail imagemagick python3 ripgrep socat
#   npm install -g @anthropic-ai/sandbox-runtime@0.0.83     (srt; it needs ripgrep and socat)
#   java -cp cave-sandbox-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main PeersBenchmark -f 1 -wi 1 -i 1
# (a missing peer is skipped with a line saying why; -p rounds=3 for a smoke run, not for figures).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -Pbenchmarks -pl cave-sandbox-benchmarks -am -DskipTests package
exec java -jar cave-sandbox-benchmarks/target/benchmarks.jar --summary cave-sandbox-benchmarks/target/benchmark-summary.md "$@"
