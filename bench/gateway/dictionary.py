"""Train the zstd dictionary that finished deals' histories are packed with.

`make history-dictionary` (`python -m bench.gateway.dictionary`) starts a private
`redis-server` and the evaluator, plays deals of both games through the gateway's own
code (`bench.gateway.deals`), collects the packed histories' contents (a hand record
and its events, `api.adapters.packed`) and trains a dictionary on them. It is written
as the next dictionary, `api/adapters/dictionaries/deals-<n>.zdict`, with `n` one more
than the newest shipped (or `--number`); set `DICTIONARY` in `api.adapters.packed` to
it to write new records with it. Older dictionaries stay shipped: the records written
with them name them and are read with them.

It prints the median size of a deal's packed contents with no dictionary and with the
new one, measured on deals of a seed the dictionary was not trained on.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import redis
import zstandard

from api.adapters import packed
from api.adapters.store import TableStore, hand_key, raw_command
from api.service.packing import HOLD_SECONDS, Packer
from bench.gateway.deals import play_deals
from bench.gateway.tree import create_app, in_process_settings
from bench.servers import EvaluatorServer, RedisServer

SIZE = 16 * 1024


def contents(store: TableStore, table_ids: list[str]) -> list[bytes]:
    """What the packed histories of these tables hold, uncompressed: one sample a deal."""
    samples = []
    for table_id in table_ids:
        number = 1
        while True:
            key = hand_key(table_id, number)
            raw = raw_command(store.client, "GET", key)
            if raw is None:
                break
            if packed.is_packed(raw):
                held = packed.unpack(raw)
                samples.append(b"\n".join([held.record, *held.events]))
            number += 1
    return samples


def pack_all(store: TableStore) -> None:
    """Pack every finished deal but each table's newest, as the clock's packer would over
    time: a run packs a few deals a table and holds the tables still behind for
    `HOLD_SECONDS`, so each run after the first sees its clock that much later."""
    later = [0.0]
    packer = Packer(store, clock=lambda: time.time() + later[0])
    while packer.run():
        later[0] += HOLD_SECONDS


def played(url: str, evaluator: str, deals: int, seed: int) -> list[bytes]:
    """The packed contents of `deals` deals a table of each kind, played from `seed`."""
    app = create_app(in_process_settings(url, evaluator))
    service: Any = app.extensions["cardroom.service"]
    try:
        tables = play_deals(app.test_client(), deals, seed)
        pack_all(service.store)
        return contents(service.store, tables)
    finally:
        service.evaluator.close()


def median_size(samples: list[bytes], data: zstandard.ZstdCompressionDict | None) -> float:
    """The median compressed size of `samples` (zstd at `packed.LEVEL`)."""
    compressor = zstandard.ZstdCompressor(level=packed.LEVEL, dict_data=data, write_dict_id=False)
    return statistics.median(len(compressor.compress(sample)) for sample in samples)


def main(argv: list[str] | None = None) -> None:
    """Play, train, write the dictionary and say what it saves."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=400, help="deals a table, to train on")
    parser.add_argument("--size", type=int, default=SIZE, help="the dictionary's bytes")
    parser.add_argument("--number", type=int, help="the new dictionary's number")
    args = parser.parse_args(argv)
    shipped = [int(p.stem.split("-")[1]) for p in packed.FOLDER.glob("deals-*.zdict")]
    number = args.number or max(shipped, default=0) + 1
    server = RedisServer()
    evaluator = EvaluatorServer()
    try:
        training = played(server.url, evaluator.address, args.deals, seed=1)
        redis.Redis.from_url(server.url).flushall()
        held_out = played(server.url, evaluator.address, max(args.deals // 4, 20), seed=2)
    finally:
        evaluator.stop()
        server.stop()
    samples: list[bytes | bytearray | memoryview] = list(training)
    trained = zstandard.train_dictionary(args.size, samples, level=packed.LEVEL)
    path = packed.dictionary_path(number)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(trained.as_bytes())
    plain = statistics.median(len(sample) for sample in held_out)
    print(f"{len(training)} deals trained on, {len(held_out)} held out; dictionary {path}")
    print(
        f"a deal's contents: {plain:,.0f} bytes, {median_size(held_out, None):,.0f} with zstd,"
        f" {median_size(held_out, trained):,.0f} with the dictionary (medians)"
    )


if __name__ == "__main__":
    main()
