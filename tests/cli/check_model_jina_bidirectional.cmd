check
--model
jina-embeddings-v2-base-en
--ctx
512
--max-blind-heads
12
