"""``ponder serve``: the HTTP API, the OpenAI-compatible endpoint and the viewer."""

from __future__ import annotations

from typing import Annotated

import typer

from ponder.cli.errors import EXIT_USAGE
from ponder.cli.options import (
    ApiKeyOption,
    BaseUrlOption,
    ConfigOption,
    InstructionsOption,
    ModelOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
)
from ponder.cli.reporting import fail, reported
from ponder.cli.runs import open_cli_store
from ponder.cli.serving import (
    DrainTimeoutOption,
    MaxConnectionsOption,
    NoTokenOption,
    RequestTimeoutOption,
    ResumeRunsOption,
    TokenOption,
    UnsafeConfigOption,
    allowed_hosts,
    announcer,
    server_token,
)
from ponder.cli.session import AgentOptions, build_agent
from ponder.cli.temporal import NamespaceOption, TaskQueueOption, TemporalOption, serve_launcher
from ponder.config import AgentConfig
from ponder.exceptions import UserError

__all__ = ["serve"]


def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    token: TokenOption = None,
    no_token: NoTokenOption = False,
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    store: StoreOption = None,
    tools: ToolsOption = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(help="Another Host name to serve (a proxy's); repeat it; '*': any."),
    ] = None,
    instructions: InstructionsOption = None,
    temporal: TemporalOption = None,
    task_queue: TaskQueueOption = None,
    namespace: NamespaceOption = "default",
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    allow_unsafe_config: UnsafeConfigOption = False,
    resume_runs: ResumeRunsOption = True,
    drain_timeout: DrainTimeoutOption = 10.0,
    request_timeout: RequestTimeoutOption = 10.0,
    max_connections: MaxConnectionsOption = 1000,
) -> None:
    """Serve the HTTP API, the OpenAI-compatible endpoint and the viewer.

    A bearer token is required, a random one (printed) unless --token gives it.
    With --store, runs are checkpointed and suspended runs can be approved over HTTP;
    Ctrl-C or SIGTERM stops runs resumably and the next start resumes them.
    With --temporal HOST:PORT --task-queue Q, runs go to the workers of Q instead.
    Only the bound address's Host names are served, unless --allowed-host adds some.
    A connection without a request for --request-timeout seconds is closed; past
    --max-connections a new one gets a 503.
    """
    if not 0 <= port <= 65535:
        fail(f"error: port {port} is out of range (hint: use 1-65535)", EXIT_USAGE)
    loaded: list[AgentConfig] = []
    with reported(loaded):
        from ponder.server.app import create_app, serve_app

        required, show = server_token(token, no_token, host)
        hosts = allowed_hosts(host, allowed_host)
        if temporal:
            if any((model, config, workflow, store, tools, instructions, base_url, api_key)):
                raise UserError(
                    "with --temporal the agent lives on the workers: give "
                    "--model, --tools, --config ... to `ponder worker`"
                )
            launcher = serve_launcher(temporal, task_queue, namespace)
            app = create_app(launcher=launcher, token=required, allowed_hosts=hosts)
        else:
            options = AgentOptions(
                model,
                config,
                workflow,
                instructions or "",
                tools=tools,
                base_url=base_url,
                api_key=api_key,
            )
            agent, agent_config = build_agent(options)
            loaded.append(agent_config)
            chosen = open_cli_store(store) if store else None
            app = create_app(
                agent,
                token=required,
                store=chosen,
                allowed_hosts=hosts,
                config_path=config,
                allow_unsafe_config=allow_unsafe_config,
                drain_seconds=drain_timeout,
                resume_stored=resume_runs,
            )
        announce = announcer(host, port, required, show=show)
        serve_app(
            app,
            host=host,
            port=port,
            on_ready=announce,
            request_timeout=request_timeout,
            max_connections=max_connections,
        )
