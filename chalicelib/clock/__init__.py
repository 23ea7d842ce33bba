"""Test clocks (DECISIONS.md "Test clocks"): a sandbox tenant's own time, moved forward on request."""
