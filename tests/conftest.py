from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# The suite runs a file per core (pytest-xdist), beside other work: wall-clock limits on generating or
# running an example fail tests for the machine's load, not for what they check.
settings.register_profile("fxexport", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fxexport")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", help="rewrite golden/<case>/ from the current exporter (the run still fails)")
