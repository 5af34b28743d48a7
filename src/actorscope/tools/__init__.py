"""The tool boundary: identity-validated arguments, flat schemas (strict on request), built-ins.

The MCP server is ``actorscope.tools.mcp_server`` (extra ``mcp``), imported only where it serves.
"""

from actorscope.tools._builtin import builtin_tools
from actorscope.tools._registry import Tool, ToolRegistry, ToolResult
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
]
