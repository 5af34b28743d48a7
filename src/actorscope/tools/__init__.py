"""The tool boundary: identity-validated arguments, flat linted schemas, and the built-in tools.

The MCP server is ``actorscope.tools.mcp_server`` (extra ``mcp``), imported only where it serves.
"""

from actorscope.tools._builtin import builtin_tools
from actorscope.tools._catalog import tools_from_json
from actorscope.tools._identity_args import resolve_agent_identity
from actorscope.tools._lint import Violation, lint_tool_schema, to_openai_strict
from actorscope.tools._memory import MemoryEntry, MemoryKey
from actorscope.tools._registry import Tool, ToolRegistry, ToolResult
from actorscope.tools._schema import flat_schema
from actorscope.tools._token import (
    IDENTITY_HEADER,
    IDENTITY_TOKEN_ENV,
    decode_identity_token,
    encode_identity_token,
    identity_from_token,
)
from actorscope.tools._toolbox import Toolbox
from actorscope.tools._workspace import FileMissingError, UnsafePathError, Workspace

__all__ = [
    "IDENTITY_HEADER",
    "IDENTITY_TOKEN_ENV",
    "FileMissingError",
    "MemoryEntry",
    "MemoryKey",
    "Tool",
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
    "to_openai_strict",
    "tools_from_json",
]
