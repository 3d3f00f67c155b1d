plot
gradient
--model
jina-embeddings-v2-base-en
--output
plot-encoder-gradient.svg
