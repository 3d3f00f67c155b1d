rope
--model
falcon-7b
