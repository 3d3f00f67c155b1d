#!/bin/sh
# Optional test: simulate --backward vs PyTorch's CPU autograd (tests/torch/validate_gradient.py).
# Exit 77 (CTest SKIP_RETURN_CODE) when /usr/bin/python3 cannot import torch.
# usage: run_gradient.sh path/to/alibi-blind
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3: skipped"; exit 77; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "/usr/bin/python3 cannot import torch: skipped"; exit 77; }
exec /usr/bin/python3 "$(dirname "$0")/validate_gradient.py" "$1"
