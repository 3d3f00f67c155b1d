analyze
--model
bloom-560m,mpt-30b,falcon-rw-7b
--ctx
8k
