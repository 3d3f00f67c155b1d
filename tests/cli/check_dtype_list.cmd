check
--model
bloom-560m
--ctx
64
--dtype
all