simulate
--model
bloom-560m
--ctx
512
--predict
