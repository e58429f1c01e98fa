"""A length that is part of the time phrase is no cadence word of the product."""

from __future__ import annotations

import pytest

from xhelio.language.products import request_terms


@pytest.mark.parametrize(
    "text",
    [
        "psp fields mag rtn 1 min, perihelion 4 (jan 29 2020 +/- 12h)",
        "wind mfi 1 min on 2015-03-17 at 12:00 plus or minus 6 hours",
    ],
)
def test_the_window_length_is_no_cadence_term(text: str) -> None:
    typed = [t.typed for t in request_terms(text, ())]
    assert "1 min" in typed
    assert not any("12h" in t or "6 hours" in t for t in typed)
