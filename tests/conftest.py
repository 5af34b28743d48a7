"""Project-wide test configuration: pytester, to test the actorscope pytest plugin."""

pytest_plugins = ["pytester"]
