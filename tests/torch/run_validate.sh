#!/bin/sh
# Optional test: simulate vs PyTorch's CPU softmax (tests/torch/validate_torch.py, quick cases).
# Exit 77 (CTest SKIP_RETURN_CODE) when /usr/bin/python3 cannot import torch.
# usage: run_validate.sh path/to/alibi-blind
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3: skipped"; exit 77; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "/usr/bin/python3 cannot import torch: skipped"; exit 77; }
exec /usr/bin/python3 "$(dirname "$0")/validate_torch.py" "$1" --quick
