design
--model
jais-family-256m
--ctx
2048
