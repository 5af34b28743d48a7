"""``python -m actorscope``."""

import sys

from actorscope.cli import main

sys.exit(main())
