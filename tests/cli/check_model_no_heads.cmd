check
--model
mpt-30b
--ctx
2048
