simulate
--model
jina-embeddings-v2-base-en
--ctx
4096
--predict
