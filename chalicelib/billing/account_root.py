"""The billing roots a billing write bumps (billing/repository.py keeps them): every billing container (the
account, or a policy whose `billingLevel` is `policy`) has a root whose version each write of its records
bumps in the same transaction, so two writers of one container never interleave: the later one fails
with 409 and, in a job, is retried. A leaf of billing: it imports none of billing's sub-packages.

`open_write` is how a billing write starts: a unit of work carrying the bumps of the roots of the
containers it changes, at the versions they have now, read first (what is read after them is what the
commit is conditional on). `bump` adds them to a unit of work that has other work in it already."""

from __future__ import annotations

from collections.abc import Iterable

from chalicelib.billing import repository
from chalicelib.core.context import CallContext
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork


def open_write(ctx: CallContext, account: str, containers: Iterable[str]) -> UnitOfWork:
    """A unit of work bumping the billing roots of the account's `containers` (the account's own too, when
    named), at the versions they have now (one read)."""
    uow = wiring.unit_of_work(ctx)
    bump(ctx, uow, account, containers)
    return uow


def bump(ctx: CallContext, uow: UnitOfWork, account: str, containers: Iterable[str]) -> dict[str, int]:
    """Add to `uow` the bumps of the billing roots of the account's `containers`, at the versions they have
    now (one read); answers those versions (the commit makes each one more)."""
    versions = repository.root_versions(ctx.tenant, account, containers)
    repository.bump_roots(uow, ctx.tenant, account, versions)
    return versions


def bump_containers(ctx: CallContext, uow: UnitOfWork, account: str, containers: Iterable[str]) -> None:
    """For a write whose `uow` bumps the account's root already (it moves the account's money): the bumps of
    the roots of the other containers whose records it changes (one read; none when all are the account's)."""
    repository.bump_container_roots(uow, ctx.tenant, account, containers)


def versions(
    ctx: CallContext, account: str, containers: Iterable[str], known: dict[str, int] | None = None
) -> dict[str, int]:
    """The versions the billing roots of the account's `containers` have now (one read of those not `known`:
    read by the caller, before what its write decides on), for a write that bumps them later (`bump_at`), or
    several writes that each bump some of them."""
    known = known or {}
    wanted = list(dict.fromkeys(containers))
    read = repository.root_versions(ctx.tenant, account, [c for c in wanted if c not in known])
    return {container: known[container] if container in known else read[container] for container in wanted}


def bump_at(ctx: CallContext, uow: UnitOfWork, account: str, at: dict[str, int]) -> None:
    """Add to `uow` the bumps of the billing roots of `at` (container -> the version it was read at)."""
    repository.bump_roots(uow, ctx.tenant, account, at)
