"""Schedules: item lists of quote and transaction elements, and the jobs that fill them from files."""
