analyze
--model
bigscience/bloom-560m
--format
json
