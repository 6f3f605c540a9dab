"""Record a run as a cassette and replay it offline, deterministically.

``Agent(..., record="run.json")`` (or ``ponder run --record run.json``) writes every model
request and response, tool call and result, and the VM's node path of each run to a
JSON cassette. ``Agent(ReplayModel("run.json"), ...)`` (or ``ponder replay run.json``)
runs it again without the model and raises `ReplayDivergence` at the first difference.
"""

from ponder.exceptions import ReplayDivergence
from ponder.replay.cassette import (
    CASSETTE_VERSION,
    Cassette,
    Exchange,
    NodeVisit,
    ToolRecord,
    load_cassette,
    save_cassette,
)
from ponder.replay.record import Recorder, RecordingModel
from ponder.replay.replay import ReplayModel, ReplayTap

__all__ = [
    "CASSETTE_VERSION",
    "Cassette",
    "Exchange",
    "NodeVisit",
    "Recorder",
    "RecordingModel",
    "ReplayDivergence",
    "ReplayModel",
    "ReplayTap",
    "ToolRecord",
    "load_cassette",
    "save_cassette",
]
