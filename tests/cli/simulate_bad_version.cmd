simulate
--heads
4
--ctx
64
--pipeline
falcon-hf-sdpa,version=44272086
