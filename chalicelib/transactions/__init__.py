"""Policy transactions: change, renew, cancel, reinstate, reverse (issue 12)."""
