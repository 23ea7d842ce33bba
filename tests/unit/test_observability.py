"""The process's one Logger, also when parallel requests ask for it first at the same moment."""

from __future__ import annotations

import threading

from chalicelib.runtime import observability


def test_parallel_first_calls_share_one_logger(monkeypatch):
    monkeypatch.setattr(observability, "_logger", None)
    start = threading.Barrier(8)
    built: list[object] = []

    def first_call() -> None:
        start.wait()
        built.append(observability.logger())

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(logger) for logger in built}) == 1
    built[0].info("logged")  # the formatter works
