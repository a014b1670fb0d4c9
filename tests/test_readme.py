"""The README's claims table is generated from the registry and must not drift from it.

Oracle independence: none is needed and none is claimed. This is a drift gate: the renderer is the
reference, and the test says only that the committed README is what it renders now (the table's content is
checked where it comes from, in tests/test_spec.py).
"""

from checks.runners.readme import README, render


def test_readme_claims_table_is_fresh():
    text = README.read_text()
    assert render(text) == text, "run: python -m checks.runners.readme"
