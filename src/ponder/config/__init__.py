"""Configuration: `AgentConfig` and its loaders.

``agent`` holds `AgentConfig`, `load_config` and `ConfigWarning`; ``bot`` reads the
existing bot's ``config.toml`` layouts; ``fields`` describes the fields for the settings
API and page; ``file`` writes changes back into a config file, keeping its layout;
``masking`` hides secrets inside config values on read and restores them on write.
"""

from ponder.config.agent import (
    DEFAULT_THOUGHT_MODE,
    AgentConfig,
    ConfigWarning,
    ContextStrategy,
    ReportLevel,
    StallAction,
    StrategyName,
    ThoughtMode,
    ToolCallingMode,
    WorkflowName,
    load_config,
)

__all__ = [
    "DEFAULT_THOUGHT_MODE",
    "AgentConfig",
    "ConfigWarning",
    "ContextStrategy",
    "ReportLevel",
    "StallAction",
    "StrategyName",
    "ThoughtMode",
    "ToolCallingMode",
    "WorkflowName",
    "load_config",
]
