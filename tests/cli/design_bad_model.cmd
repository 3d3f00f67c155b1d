design
--model
bloom-560x
--ctx
512
