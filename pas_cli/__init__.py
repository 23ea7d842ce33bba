"""`pas`, the command line of the PAS API: profiles, configuration deployments, tables, test clocks, the event
stream and fixtures. It talks to the service over HTTP only (never imports chalicelib: .importlinter's
cli-through-the-api contract), so it works against `make run` and a deployed stack alike."""
