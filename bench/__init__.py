"""ponder benchmarks: `make bench` runs them all and rewrites bench/RESULTS.md."""
