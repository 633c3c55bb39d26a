"""The evaluator's benchmark. `python -m bench.evaluator` (`make bench-evaluator`)
measures the bulk path and the other calls (`rates`) against the batch rankers in
process, the gRPC transport alone (`grpc_echo`) and PokerKit."""
