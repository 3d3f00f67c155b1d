#!/usr/bin/env python3
"""Turn the CLI's option lookups by name into lookups by id (issue 17 item 4).

    abl_cli_value(cmd, v, "logit-range")   ->   abl_cli_arg(cmd, v, ABL_OPT_LOGIT_RANGE)

Each name is checked against the option table (src/cli/abl_cli_options.c): a name the table lacks is an
error (file:line), never a silent NULL. Lookups that do not name a literal option (a variable holding a
name) are listed and make the script fail: convert them by hand to ids (abl_opt).

usage: tools/opt_ids.py [--check] [FILE...]     (default: src/cli/*.c)
  --check   change nothing; exit 1 when a file still has a lookup by name (for CI or after a merge)
Idempotent: run it again after merging a branch that added lookups by name.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALL = re.compile(r'abl_cli_value\(\s*(\w+)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*\)')
ANY = re.compile(r'\babl_cli_value\(')


def table_names():
    src = open(os.path.join(ROOT, 'src/cli/abl_cli_options.c'), encoding='utf-8').read()
    return {name: oid for oid, name in re.findall(r'\[(ABL_OPT_\w+)\] = \{"([a-z0-9-]+)"', src)}


def main(argv):
    check = '--check' in argv
    files = [a for a in argv if a != '--check'] or sorted(glob.glob(os.path.join(ROOT, 'src/cli/*.c')))
    names = table_names()
    bad = 0
    for path in files:
        if path.endswith('abl_cli_options.c'):
            continue
        text = open(path, encoding='utf-8').read()

        def repl(m):
            nonlocal bad
            name = m.group(3)
            if name not in names:
                line = text.count('\n', 0, m.start()) + 1
                print('%s:%d: no option --%s in the table' % (path, line, name), file=sys.stderr)
                bad = 1
                return m.group(0)
            return 'abl_cli_arg(%s, %s, %s)' % (m.group(1), m.group(2), names[name])

        new = CALL.sub(repl, text)
        for m in ANY.finditer(new):
            line = new.count('\n', 0, m.start()) + 1
            print('%s:%d: a lookup by name left (convert it to an abl_opt id by hand)' % (path, line),
                  file=sys.stderr)
            bad = 1
        if new != text:
            if check:
                print('%s: lookups by name to convert' % path, file=sys.stderr)
                bad = 1
            else:
                open(path, 'w', encoding='utf-8').write(new)
    return bad


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
