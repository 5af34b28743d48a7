"""Benchmarks: each module's ``main()`` prints ratios against the bare libraries."""
