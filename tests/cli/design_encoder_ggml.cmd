design
--model
jina-embeddings-v2-base-en
--ctx
512
--pipeline
llamacpp-cpu
