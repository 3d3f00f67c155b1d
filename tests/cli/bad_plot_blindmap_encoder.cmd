plot
blindmap
--model
jina-embeddings-v2-base-en
--ctx
64
--output
plot-encoder-blindmap.svg
