"""Skip reasons are named constants that code compares by identity, never by text."""

from stablehlo_bnfold.fold import reasons
from stablehlo_bnfold.fold.reasons import NOT_CONSTANT, WEIGHTS_NOT_CONSTANT, Reason

CONSTANTS = {name: getattr(reasons, name) for name in reasons.__all__ if name.isupper()}
PHRASES = {name: value for name, value in CONSTANTS.items() if isinstance(value, Reason)}


def test_a_reason_is_equal_only_to_itself_not_to_another_reason_with_its_words():
    twin = Reason(str(WEIGHTS_NOT_CONSTANT))
    assert WEIGHTS_NOT_CONSTANT == WEIGHTS_NOT_CONSTANT
    assert twin != WEIGHTS_NOT_CONSTANT and not twin == WEIGHTS_NOT_CONSTANT
    assert twin not in NOT_CONSTANT and WEIGHTS_NOT_CONSTANT in NOT_CONSTANT


def test_report_text_read_back_equals_its_constant_and_is_no_member_of_a_group():
    text = "weights are not a constant"
    assert text == WEIGHTS_NOT_CONSTANT and WEIGHTS_NOT_CONSTANT == text
    assert text not in NOT_CONSTANT  # groups hold constants: text never selects a branch


def test_every_reason_has_its_own_words_and_prints_as_plain_text():
    texts = [str(value) for value in PHRASES.values()]
    assert len(set(texts)) == len(texts)
    assert all(type(t) is str and t == t.lower() for t in texts)


def test_a_detailed_reason_is_text_that_starts_with_its_constant():
    detailed = reasons.NO_LINEAR_OP.detailed("reads an argument, read by func.return")
    assert type(detailed) is str
    assert detailed == f"{reasons.NO_LINEAR_OP} (reads an argument, read by func.return)"
