check
--model
falcon-rw-1b
--ctx
2048
--criterion
gradient
