"""Fleet-scale training on a Dask cluster: each worker turns page files
(snapshots or raw ``.pages``) into ``cannery.Histogram`` objects, the
histograms are summed in a tree, and one table is trained from the total.

Only file paths travel to the workers and only histograms (a few KB each)
travel back: pages never leave the machine that reads them. The files must
be readable by the workers (shared storage, or each host's own files).
Histograms sum exactly (integer counts), so the table is byte-identical to
``cannery.train_from_histogram(sum(Histogram.from_file(p) for p in paths))``
whatever the partitioning. Parsing, merging and training run in Rust; this
module only schedules them. Requires ``dask[distributed]`` (or plain
``dask`` with a local scheduler).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Optional, Union

from cannery._native import Histogram, InvalidInputError, Table, train_from_histogram

if TYPE_CHECKING:
    import os

__all__ = ["histogram", "histogram_of", "train"]


def histogram_of(path: Union[str, os.PathLike[str]], *, parse: str = "fast") -> Histogram:
    """Histogram of one page file or corpus directory (runs on a worker)."""
    return Histogram.from_file(path, parse=parse)  # type: ignore[arg-type]


def histogram(
    paths: Iterable[Union[str, os.PathLike[str]]],
    *,
    client: Optional[Any] = None,
    parse: str = "fast",
    split_every: int = 8,
) -> Histogram:
    """The sum of the histograms of ``paths``, computed on Dask.

    One task per path builds its histogram; a tree reduction
    (``split_every`` histograms per node) sums them. ``client`` is a
    ``distributed.Client`` (None: Dask's current default scheduler).
    """
    import dask.bag as db

    files = [str(p) for p in paths]
    if not files:
        raise InvalidInputError("no page files given")
    bag = db.from_sequence(files, npartitions=len(files))  # type: ignore[no-untyped-call]
    total = bag.map(histogram_of, parse=parse).fold(
        operator.add, initial=Histogram(parse), split_every=split_every  # type: ignore[arg-type]
    )
    if client is not None:
        result: Histogram = client.compute(total, sync=True)
    else:
        result = total.compute()
    return result


def train(
    paths: Iterable[Union[str, os.PathLike[str]]],
    *,
    client: Optional[Any] = None,
    parse: str = "fast",
    name: str = "fleet",
    smoothing: Optional[str] = None,
    qpl_compatible: bool = False,
    all_distances: bool = False,
    split_every: int = 8,
) -> Table:
    """One table trained from every page of ``paths``, gathered on Dask
    workers (see ``histogram``); options as for
    ``cannery.train_from_histogram``."""
    total = histogram(paths, client=client, parse=parse, split_every=split_every)
    return train_from_histogram(
        total,
        name=name,
        smoothing=smoothing,
        qpl_compatible=qpl_compatible,
        all_distances=all_distances,
    )
