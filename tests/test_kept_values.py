"""kept_values.may_keep_values: a module call that may keep a value on its module stays inline where its
caller reads one of its intermediate values; one whose source shows it keeps nothing returns them."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fxexport.kept_values import may_keep_values


class Returns(nn.Module):
    def forward(self, x):
        out = {"a": x}
        out["b"] = x * 2
        return out


class KeepsAttribute(nn.Module):
    def forward(self, x):
        self.hidden = x * 2
        return self.hidden + 1


class KeepsItem(nn.Module):
    def forward(self, x):
        self.cache["x"] = x
        return x


class KeepsInList(nn.Module):
    def forward(self, x):
        self.outputs.append(x)
        return x


class KeepsBySetattr(nn.Module):
    def forward(self, x):
        setattr(self, "hidden", x)  # noqa: B010 - the spelling the test is about
        return x


class KeepsByObjectSetattr(nn.Module):
    def forward(self, x):
        object.__setattr__(self, "hidden", x)
        return x


class WritesBufferInPlace(nn.Module):
    def forward(self, x):
        self.count.add_(1)
        return x


class KeepsInHelper(nn.Module):
    def forward(self, x):
        return self._remember(x) + 1

    def _remember(self, x):
        self.hidden = x
        return x


class CleanHelper(nn.Module):
    def forward(self, x):
        return self._double(x) + 1

    def _double(self, x):
        return x * 2


class ReadsSelfInOtherTarget(nn.Module):
    """T5Attention's `cache.is_updated[self.layer_idx] = True`: it stores into `cache`, not into self."""

    def forward(self, x, cache):
        cache.is_updated[self.layer_idx] = True
        return x


class RebindsSelf(nn.Module):
    def forward(self, x):
        self = self.other
        return x


class LibraryMethods(nn.ModuleDict):
    def forward(self, x):
        for layer in self.values():
            x = layer(x)
        return x


def _unreadable() -> type:
    namespace: dict[str, object] = {}
    exec("def forward(self, x):\n    return x\n", namespace)  # no file to read its source from
    return type("Unreadable", (nn.Module,), {"forward": namespace["forward"]})


CASES = [
    ("returns", Returns, False),
    ("keeps_attribute", KeepsAttribute, True),
    ("keeps_item", KeepsItem, True),
    ("keeps_in_list", KeepsInList, True),
    ("keeps_by_setattr", KeepsBySetattr, True),
    ("keeps_by_object_setattr", KeepsByObjectSetattr, True),
    ("writes_buffer_in_place", WritesBufferInPlace, True),
    ("keeps_in_helper", KeepsInHelper, True),
    ("clean_helper", CleanHelper, False),
    ("stores_into_another_object", ReadsSelfInOtherTarget, False),
    ("rebinds_self", RebindsSelf, True),
    ("library_methods", LibraryMethods, False),
    ("source_unreadable", _unreadable(), True),
    ("by_qualified_name", f"{__name__}.Returns", False),  # as torch.export records the class
    ("by_qualified_name_keeping", f"{__name__}.KeepsAttribute", True),
    ("name_not_importable", "no_such_package.Module", True),
    ("torch_layer", nn.Linear, False),
]


@pytest.mark.parametrize(("name", "cls", "keeps"), CASES, ids=[c[0] for c in CASES])
def test_a_module_may_keep_values_only_where_its_source_says_it_may(name: str, cls: type | str, keeps: bool) -> None:
    assert may_keep_values(cls) is keeps


def test_the_rule_matches_what_the_module_does() -> None:
    """The cases that keep a value do keep one when run: the source reading is not looser than the code."""
    kept = KeepsInHelper()
    kept(torch.ones(1))
    assert "hidden" in vars(kept)
    returned = Returns()
    before = set(vars(returned))
    returned(torch.ones(1))
    assert set(vars(returned)) == before
