"""The benchmarks, a room a service: `bench/gateway/` (`make bench-gateway`,
`make bench-capacity`, `make loadtest`) and `bench/evaluator/` (`make bench-evaluator`);
beside them what both use: `bench/measure.py` (medians, ranges, alternating runs, the
CPU of processes) and `bench/servers.py` (a private Redis and the evaluator). Every
benchmark writes its JSON to `bench/results/`; the figures are read in
docs/performance.md."""
