analyze
--model
bloom
--level
weight
