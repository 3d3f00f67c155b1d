#!/bin/sh
# Optional test: simulate --backward (validate_gradient.py, the default) or design --keep gradient
# (validate_design_gradient.py, the second argument) vs PyTorch's CPU autograd.
# Exit 77 (CTest SKIP_RETURN_CODE) when /usr/bin/python3 cannot import torch.
# usage: run_gradient.sh path/to/alibi-blind [SCRIPT.py]
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3: skipped"; exit 77; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "/usr/bin/python3 cannot import torch: skipped"; exit 77; }
exec /usr/bin/python3 "$(dirname "$0")/${2:-validate_gradient.py}" "$1"
