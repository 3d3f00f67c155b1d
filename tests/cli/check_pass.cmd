check
--model
mpt-7b
--ctx
100
