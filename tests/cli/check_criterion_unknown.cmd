check
--model
bloom-560m
--ctx
2048
--criterion
mass
