plot
bias
--model
jina-colbert-v1-en
--output
b.svg
