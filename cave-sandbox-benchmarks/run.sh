#!/usr/bin/env bash
# Builds and runs every benchmark of BENCHMARKS.md in one go (about 8 minutes on 2 cores) and
# writes the Markdown summary to cave-sandbox-benchmarks/target/benchmark-summary.md.
#   cave-sandbox-benchmarks/run.sh            the full set
#   cave-sandbox-benchmarks/run.sh --quick    a short smoke run (not for figures)
# bubblewrap is measured where /usr/bin/bwrap is installed (apt-get install -y bubblewrap).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q -Pbenchmarks -pl cave-sandbox-benchmarks -am -DskipTests package
exec java -jar cave-sandbox-benchmarks/target/benchmarks.jar --summary cave-sandbox-benchmarks/target/benchmark-summary.md "$@"
