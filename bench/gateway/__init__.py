"""The gateway's benchmarks. `python -m bench.gateway` (`make bench-gateway`) runs the
default parts and the ones its options ask for: its plan (`plan`), the service it starts
(`service`), its HTTP client (`client`), its tables (`tables`), the load's processes
(`load`), the request rounds and whole deals (`rounds`), Redis memory (`memory`), the
buy-ins and cash-outs (`seats`), the gateway's code run in process (`inprocess`,
`steps`, `compression`), the collector's policy (`gc_policy`), batched Redis commands
(`batch`) and another revision's gateway (`versions`); `tree` builds the gateway of the
tree measured, whichever its package (the one place that knows how). `python -m
bench.gateway.capacity` (`make bench-capacity`) measures what docs/capacity.md models,
and `locustfile` is `make loadtest`'s."""
