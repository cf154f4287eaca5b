"""Slow calls (a model turn, loading the registry, reading runs) in daemon threads, awaited from a Textual worker.

Textual's thread workers run in asyncio's default executor, which Python joins
when the app ends: quitting during a model request would leave the terminal
blank until the request timed out. `in_thread` runs the call in a daemon
thread instead and hands its result to an awaitable; cancelling the awaiting
worker (Esc, quitting) returns at once, and the thread's late result is
dropped. The call itself never touches a widget: it may only post messages.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


async def in_thread(fn: Callable[..., Any], *args: Any, name: str = "snakegate-background", **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` in a daemon thread; its return value (or exception) once it is done."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # the waiter was cancelled: nobody wants the result any more
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def run() -> None:
        try:
            result, ok = fn(*args, **kwargs), True
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side, which decides
            result, ok = exc, False
        try:
            loop.call_soon_threadsafe(settle, ok, result)
        except RuntimeError:  # the app (and its loop) ended while this ran
            pass

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future
