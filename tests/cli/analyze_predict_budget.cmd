analyze
--heads
1
--ctx
16777216
--pipeline
falcon-hf-sdpa
