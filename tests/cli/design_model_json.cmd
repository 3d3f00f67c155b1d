design
--model
bloom-560m
--ctx
512
--format
json
