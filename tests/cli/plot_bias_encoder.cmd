plot
bias
--model
jina-embeddings-v2-base-en
--output
plot-encoder-bias.svg
--data
-
