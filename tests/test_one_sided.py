"""checks.runners.one_sided has teeth: a planted one-sided level is flagged, its two-sided repairs are not."""

from __future__ import annotations

from checks.runners.one_sided import scan

ONE = '''
def level_P(ctx):
    L = bracket()
    sampled = probe()
    return Outcome(sampled <= L.upper, {}, "")
'''
TWO_ATTAINED = ONE.replace("sampled <= L.upper", "sampled <= L.upper and sampled >= L.upper * (1 - 1e-6)")
TWO_GAP = ONE.replace("sampled <= L.upper", "sampled <= L.upper and (L.upper - sampled) / L.upper < 1e-4")
TWO_EQ = ONE.replace("sampled <= L.upper", "value == expected")
HELPER = '''
def _check(L, s):
    return s <= L.upper

def level_F(ctx):
    return Outcome(_check(bracket(), probe()), {}, "")
'''


def test_flags_a_one_sided_level_and_not_its_repairs(tmp_path):
    files = {}
    for name, src in (("one", ONE), ("attained", TWO_ATTAINED), ("gap", TWO_GAP), ("eq", TWO_EQ),
                      ("helper", HELPER)):
        p = tmp_path / f"{name}.py"
        p.write_text(src)
        files[name] = p
    import checks.runners.one_sided as m

    old = m.ROOT
    m.ROOT = tmp_path
    try:
        found = {r["module"] for r in scan(list(files.values()))}
    finally:
        m.ROOT = old
    assert found == {"one.py", "helper.py"}


def test_the_suite_has_no_candidate_left():
    assert scan() == [], scan()
