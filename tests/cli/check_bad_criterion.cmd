check
--model
bloom-560m
--criterion
loss
