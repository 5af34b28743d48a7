"""The tool boundary: identity-validated arguments, flat linted schemas, and the built-in tools.

The MCP server is ``actorscope.tools.mcp_server`` (extra ``mcp``), imported only where it serves.
"""

from actorscope.tools._builtin import builtin_tools
from actorscope.tools._identity_args import resolve_agent_identity
from actorscope.tools._lint import lint_tool_schema, to_openai_strict
from actorscope.tools._registry import Tool, ToolRegistry, ToolResult
from actorscope.tools._schema import flat_schema
from actorscope.tools._token import IdentityToken
from actorscope.tools._toolbox import Toolbox
from actorscope.tools._workspace import FileMissingError, Workspace

__all__ = [
    "FileMissingError",
    "IdentityToken",
    "Tool",
    "ToolRegistry",
    "ToolResult",
    "Toolbox",
    "Workspace",
    "builtin_tools",
    "flat_schema",
    "lint_tool_schema",
    "resolve_agent_identity",
    "to_openai_strict",
]
