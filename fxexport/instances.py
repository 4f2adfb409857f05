"""How many instances each class collect made has, and which comes first: defaults go by instances.

collect makes one class per distinct code, so instances built alike share a class. A merged class's
keyword defaults and flags' defaults are the values most *instances* have: counted over classes
instead, an export and the export of its re-trace (where instances the first export builds alike
already share one class) would choose other defaults and differ (issue 14's fixed point). Of values
tied, the one whose first instance comes first wins, which neither export reorders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Instances:
    """Per class name: its instances in the module tree, and its place in collect's order (that of its
    first instance). A class not listed counts once, after every listed one."""

    counts: Mapping[str, int] = field(default_factory=dict)
    ranks: Mapping[str, int] = field(default_factory=dict)

    def weights(self, names: Sequence[str]) -> tuple[int, ...]:
        """The instances of each class named."""
        return tuple(self.counts.get(name, 1) for name in names)

    def most_common(self, values: Sequence[str], names: Sequence[str]) -> str:
        """The value most instances of the classes `names` have (one value per class); of those tied,
        the value of the earliest instance."""
        total: dict[str, int] = {}
        first: dict[str, tuple[int, int]] = {}
        for row, (value, name) in enumerate(zip(values, names, strict=True)):
            total[value] = total.get(value, 0) + self.counts.get(name, 1)
            first[value] = min(first.get(value, (len(self.ranks), row)), (self.ranks.get(name, len(self.ranks)), row))
        return min(total, key=lambda value: (-total[value], first[value]))

    def most(self, rows: frozenset[int], names: Sequence[str]) -> bool:
        """True when the classes at `rows` of `names` have more than half of their instances."""
        return majority(rows, self.weights(names))


def majority(rows: frozenset[int], weights: Sequence[int]) -> bool:
    """True when the rows at `rows` weigh more than half of all `weights` (a row's instances)."""
    return 2 * sum(weights[r] for r in rows) > sum(weights)
