"""`LocalStack.exclusive`: one process or thread at a time per data directory, so two
commands that start the stack together start each server once."""

from __future__ import annotations

import threading
from pathlib import Path

from service.settings import Settings
from service.stack import LocalStack


def _stack(data_dir: Path) -> LocalStack:
    return LocalStack(Settings.from_env().with_overrides(data_dir=data_dir))


def test_a_second_holder_waits_until_the_first_is_done(tmp_path: Path) -> None:
    entered = threading.Event()

    def second() -> None:
        with _stack(tmp_path).exclusive():
            entered.set()

    with _stack(tmp_path).exclusive():
        waiter = threading.Thread(target=second)
        waiter.start()
        assert not entered.wait(0.3)  # held: the second waits
    assert entered.wait(5.0)  # released: it goes on
    waiter.join(5.0)
    assert (tmp_path / "run" / "up.lock").exists()


def test_other_data_directories_do_not_wait(tmp_path: Path) -> None:
    entered = threading.Event()

    def other() -> None:
        with _stack(tmp_path / "other").exclusive():
            entered.set()

    with _stack(tmp_path / "one").exclusive():
        waiter = threading.Thread(target=other)
        waiter.start()
        assert entered.wait(5.0)
    waiter.join(5.0)
