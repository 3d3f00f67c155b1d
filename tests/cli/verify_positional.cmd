verify
bf16
