"""The README's claims table is generated from the registry and must not drift from it."""

from checks.readme import README, render


def test_readme_claims_table_is_fresh():
    text = README.read_text()
    assert render(text) == text, "run: python -m checks.readme"
