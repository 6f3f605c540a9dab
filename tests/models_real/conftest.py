"""The real-model lane: collected only under ``make test-models`` (``PONDER_MODELS_PYTHON``)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from ponder.testing.llama_server import LANE_PYTHON, GrammarServer, LlamaServer

collect_ignore_glob = [] if LANE_PYTHON else ["test_*.py"]


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The stock llama.cpp server with SmolLM2-135M, started once for the lane."""
    log = Path(tmp_path_factory.mktemp("llama")) / "server.log"
    # SmolLM2's own context: a run's prompts stay inside it whatever the model says (at 4k a
    # run whose last exchange alone overflows could not be cut to fit)
    server = LlamaServer(log, n_ctx=8192)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server(llama: LlamaServer) -> LlamaServer:
    """The server, with its status window reset for one test."""
    llama.mark()
    return llama


@pytest.fixture(scope="session")
def grammar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GrammarServer]:
    """ponder's grammar-constrained server on the same model, started once if asked for."""
    log = Path(tmp_path_factory.mktemp("grammar")) / "server.log"
    server = GrammarServer(log, n_ctx=4096)
    server.start()
    try:
        yield server
    finally:
        server.stop()
