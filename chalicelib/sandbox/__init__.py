"""Tenant code and tenant input on this machine: the kernel boundary (kernel.py: bubblewrap namespaces,
seccomp, an unprivileged user, a tmpfs disk) and the hostile-source parser that runs in it
(python_source.py, python_source_child.py). Below every domain (configuration parses tenant source in it,
plugins and documents run tenant code in it); imports nothing of the service but the kernel of core."""
