"""docs/python.md's examples run with doctest: their printed output is the real output (issue 23)."""
import doctest
import os

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")


def test_python_md_examples():
    failed, attempted = doctest.testfile(DOC, module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False)
    assert attempted >= 15, "docs/python.md lost its examples (%d)" % attempted
    assert failed == 0
