"""The package version, read by hatchling at build time and by ``actorscope --version``."""

__version__ = "0.1.0"
