"""The tool boundary: identity-validated arguments, flat linted schemas, and the built-in tools.

The MCP server is ``actorscope.tools.mcp_server`` (extra ``mcp``), imported only where it serves.
"""

from actorscope.errors import IdentityValidationError
from actorscope.tools._builtin import BUILTIN_TOOL_NAMES, builtin_tools
from actorscope.tools._catalog import ToolDefinition, tools_from_json
from actorscope.tools._cron import CronJob, CronStore
from actorscope.tools._identity_args import (
    AGENT_ALIAS_DESCRIPTION,
    AGENT_ID_DESCRIPTION,
    CANONICAL_FIELD,
    DEPRECATED_FIELD,
    resolve_agent_identity,
)
from actorscope.tools._lint import TARGETS, Target, Violation, lint_tool_schema, to_openai_strict
from actorscope.tools._memory import MemoryBackend, MemoryEntry, MemoryKey, SqliteMemory
from actorscope.tools._registry import EMPTY_IDENTITY, Tool, ToolCall, ToolRegistry, ToolResult
from actorscope.tools._schema import flat_schema
from actorscope.tools._storage import storage_scope
from actorscope.tools._token import (
    IDENTITY_HEADER,
    IDENTITY_TOKEN_ENV,
    decode_identity_token,
    encode_identity_token,
    identity_from_token,
)
from actorscope.tools._toolbox import Toolbox
from actorscope.tools._workspace import FileMissingError, UnsafePathError, Workspace, scope_segment

__all__ = [
    "AGENT_ALIAS_DESCRIPTION",
    "AGENT_ID_DESCRIPTION",
    "BUILTIN_TOOL_NAMES",
    "CANONICAL_FIELD",
    "DEPRECATED_FIELD",
    "EMPTY_IDENTITY",
    "IDENTITY_HEADER",
    "IDENTITY_TOKEN_ENV",
    "TARGETS",
    "CronJob",
    "CronStore",
    "FileMissingError",
    "IdentityValidationError",
    "MemoryBackend",
    "MemoryEntry",
    "MemoryKey",
    "SqliteMemory",
    "Target",
    "Tool",
    "ToolCall",
    "ToolDefinition",
    "ToolRegistry",
    "ToolResult",
    "Toolbox",
    "UnsafePathError",
    "Violation",
    "Workspace",
    "builtin_tools",
    "decode_identity_token",
    "encode_identity_token",
    "flat_schema",
    "identity_from_token",
    "lint_tool_schema",
    "resolve_agent_identity",
    "scope_segment",
    "storage_scope",
    "to_openai_strict",
    "tools_from_json",
]
