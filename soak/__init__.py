"""The soak: several ``actorscope run`` workers on one PostgreSQL, under a stream and faults.

``make soak`` (``python -m soak``) starts a throwaway PostgreSQL, the Telegram Bot API and
Discord emulators, a webhook dispatcher, N workers, an operator on ``actorscope serve``, plays
a realistic stream for a set time while injecting faults on a printed schedule, and prints one
table of what held (see ``docs/guides/scaling.md``). Exit 1 names the first broken invariant.
"""
