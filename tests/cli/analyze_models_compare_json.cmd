analyze
--model
bloom-560m,mpt-7b
--ctx
1k
--format
json
