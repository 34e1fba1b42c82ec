"""The journal of pending vector changes, without a server (issue 40).

A live process's records are its own; a dead one's open records are taken over once,
its file removed; a torn last line (a process killed while writing it) is skipped.
"""

from __future__ import annotations

from pathlib import Path

from memora_ogm.vector_db.pending import Journal, Pending, open_records


def test_open_records_are_those_opened_and_never_closed() -> None:
    lines = [
        '{"open":"a","memory_ids":["m1"],"users":[],"organizations":[]}',
        '{"open":"b","memory_ids":[],"users":[["o","u"]],"organizations":["o"]}',
        '{"close":"a"}',
        '{"open":"c","memory_ids":["m',  # torn: the process died writing it
    ]
    assert open_records(lines) == [Pending("b", (), (("o", "u"),), ("o",))]


def test_a_live_process_keeps_its_records_and_a_dead_ones_are_taken_over(
    tmp_path: Path,
) -> None:
    writer = Journal(tmp_path)
    open_one = writer.begin(["m1", "m2"], [("o", "u")])
    writer.close(writer.begin(["m3"]))
    assert Journal(tmp_path).pending() == [], "a live process's record was taken"

    assert writer._file is not None
    writer._file.close()  # the writer's process ends: its lock goes with it
    survivor = Journal(tmp_path)
    assert not survivor.unsettled, "ended processes' records were looked for unasked"
    assert survivor.pending() == [open_one]
    assert [path.name for path in tmp_path.iterdir()] == [Path(survivor._file.name).name]  # type: ignore[union-attr]

    taken = survivor.take()
    assert taken == [open_one]
    assert survivor.take() == [], "a record was given to two settlers"
    survivor.close(open_one)
    assert survivor.pending() == [] and not survivor.unsettled
    assert Journal(tmp_path).pending() == []


def test_a_record_held_again_after_a_failed_settling_is_taken_again() -> None:
    journal = Journal(None)  # a store in memory: records in memory too
    record = journal.begin(["m1"])
    journal.hold(record)
    assert journal.unsettled
    assert journal.take() == [record]
    journal.hold(record)
    assert journal.take() == [record]
    journal.close(record)
    assert not journal.unsettled
