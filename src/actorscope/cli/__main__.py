"""``python -m actorscope.cli``."""

import sys

from actorscope.cli import main

sys.exit(main())
