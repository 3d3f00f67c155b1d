check
--model
bloom-560m
--criterion
gradient
--format
csv
