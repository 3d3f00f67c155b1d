check
--model
bloom
--ctx
1e9
