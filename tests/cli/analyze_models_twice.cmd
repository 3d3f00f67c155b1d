analyze
--model
bloom-560m,BLOOM-560M
--ctx
1k
