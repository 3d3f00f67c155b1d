analyze
--model
bigscience/bloom-560m
--format
csv
