analyze
--model
tiiuae/falcon-7b
--ctx
2048
